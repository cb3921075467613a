-- SPDX-License-Identifier: BSD-3-Clause
-- subheaders.lua - what follows PME's fixed header, by frame type: the fragment,
-- rendezvous and handshake sub-headers of src/pme_core/pme_wire.h, and the message
-- header and data they carry.
--
-- Loaded by ../pme.lua; returns a constructor and creates nothing when loaded.
return function(W)
    local F, E = W.f, W.e
    local S = {}
    local band = (bit32 or bit).band

    local function pad(tree, field, tvbr)
        local item = tree:add(field, tvbr)
        if tvbr:uint() ~= 0 then
            item:add_proto_expert_info(E.reserved)
        end
    end

    -- The message header and data inside a frame's payload. hdr_bytes of the payload are
    -- message header (whole or in part), the rest is data; a header that starts here
    -- is handed to the upper layer's decoder (ctx.upper) when there is one.
    local function payload(tvb, off, hdr_bytes, ctx, whole_header)
        local tree = ctx.tree
        local n = tvb:len() - off
        local info = ""
        if hdr_bytes > 0 then
            local h = tvb(off, hdr_bytes)
            tree:add(F.msg_hdr, h)
            if ctx.upper and whole_header then
                info = ctx.upper(h:tvb(), ctx.pinfo, ctx.root)
            end
        end
        if n > hdr_bytes then
            tree:add(F.data, tvb(off + hdr_bytes, n - hdr_bytes))
        end
        return info
    end

    -- Each decoder gets the bytes after the fixed header (tvb), the sub-header's tree
    -- and the context (ctx.tree: the frame's PME tree), and returns the Info text.
    -- need: bytes of its sub-header.
    local decoders = {}

    -- A whole bundle (pme_wire.h, PME_DATA_BUNDLE and PME_RMA_BUNDLE) in this frame's
    -- payload from off: each record decoded by each(record's bytes or nil, its tree, its
    -- user header's length, a context for it), as long as the records fit the bundle;
    -- what names a record ("Message", "Operation").
    local function bundle(tvb, off, total, ctx, what, each)
        local tree = ctx.tree
        if total < 16 then
            tree:add_proto_expert_info(E.bounds, "A bundle of " .. total .. " bytes holds no record")
            return " bundle"
        end
        local count = tvb(off, 2):uint()
        local bt = tree:add(F.bundle_count, tvb(off, 2))
        pad(tree, F.bundle_pad, tvb(off + 2, 2))
        pad(tree, F.bundle_pad2, tvb(off + 4, 4))
        local at, info = 8, ""
        for i = 1, count do
            if at + 8 > total then
                bt:add_proto_expert_info(E.bounds, string.format(
                    "Record %d of %d starts past the bundle's %d bytes", i, count, total))
                break
            end
            local len, hdr_len = tvb(off + at, 4):uint(), tvb(off + at + 4, 2):uint()
            local rt = tree:add(tvb(off + at, math.min(8 + len, total - at)),
                string.format("%s %d of %d: %d bytes, header %d", what, i, count, len, hdr_len))
            rt:add(F.rec_len, tvb(off + at, 4))
            rt:add(F.rec_hdr_len, tvb(off + at + 4, 2))
            pad(rt, F.rec_pad, tvb(off + at + 6, 2))
            local ends = at + 8 + len
            if len > total - at - 8 or hdr_len > len or (i == count and ends ~= total) then
                rt:add_proto_expert_info(E.bounds, string.format(
                    "Record %d of %d (%d bytes, header %d) does not fit the bundle's %d bytes",
                    i, count, len, hdr_len, total))
                break
            end
            local sub = { tree = rt, upper = ctx.upper, pinfo = ctx.pinfo, root = ctx.root }
            local one = len > 0 and tvb(off + at + 8, len):tvb() or nil
            local m = each(one, rt, hdr_len, sub)
            if i == 1 then info = m end
            at = math.floor((ends + 15) / 16) * 16 + 8
        end
        return string.format(" bundle of %d", count) .. info
    end

    -- A record of a bundle of messages: the message's header and data.
    local function message_record(one, _, hdr_len, sub)
        return one and payload(one, 0, hdr_len, sub, true) or ""
    end

    decoders[1] = { need = 12, name = "Fragment", fn = function(tvb, tree, ctx) -- DATA
        local total, offset, hdr_len = tvb(0, 4):uint(), tvb(4, 4):uint(), tvb(8, 2):uint()
        tree:add(F.frag_total, tvb(0, 4))
        tree:add(F.frag_offset, tvb(4, 4))
        tree:add(F.frag_hdr_len, tvb(8, 2))
        pad(tree, F.frag_pad, tvb(10, 2))
        local plen = tvb:len() - 12
        if offset + plen > total or hdr_len > total then
            tree:add_proto_expert_info(E.bounds, string.format(
                "Fragment of %d bytes at offset %d, message header %d bytes, in a message of %d bytes",
                plen, offset, hdr_len, total))
            return string.format(" off=%d/%d", offset, total)
        end
        if ctx.bundle then
            if offset == 0 and plen == total then
                return string.format(" off=0/%d", total) ..
                    bundle(tvb, 12, total, ctx, "Message", message_record)
            end
            payload(tvb, 12, 0, ctx, false) -- a fragment of a bundle: its bytes
            return string.format(" off=%d/%d bundle", offset, total)
        end
        local hdr_here = offset < hdr_len and math.min(plen, hdr_len - offset) or 0
        local info = payload(tvb, 12, hdr_here, ctx, offset == 0 and hdr_here == hdr_len)
        return string.format(" off=%d/%d", offset, total) .. info
    end }

    decoders[2] = { need = 16, name = "Rendezvous offer", fn = function(tvb, tree, ctx) -- RTS
        tree:add(F.rts_send_id, tvb(0, 4))
        tree:add(F.rts_hdr_len, tvb(4, 2))
        pad(tree, F.rts_pad, tvb(6, 2))
        tree:add(F.rts_total, tvb(8, 8))
        local hdr_len = tvb(4, 2):uint()
        local text = " offer=" .. tostring(tvb(8, 8):uint64())
        if tvb:len() - 16 ~= hdr_len then
            tree:add_proto_expert_info(E.len, string.format(
                "RTS announces a %d-byte message header, %d bytes follow", hdr_len, tvb:len() - 16))
            return text
        end
        return text .. payload(tvb, 16, hdr_len, ctx, true)
    end }

    decoders[3] = { need = 16, name = "Rendezvous answer", fn = function(tvb, tree, ctx) -- CTS
        tree:add(F.cts_send_id, tvb(0, 4))
        tree:add(F.cts_rndv_id, tvb(4, 4))
        tree:add(F.cts_accepted, tvb(8, 8))
        local text = " accepted=" .. tostring(tvb(8, 8):uint64())
        if ctx.discard then
            text = text .. " (discard)"
        end
        return text
    end }

    decoders[4] = { need = 16, name = "Rendezvous data", fn = function(tvb, tree, ctx) -- RDATA
        tree:add(F.rdata_rndv_id, tvb(0, 4))
        pad(tree, F.rdata_pad, tvb(4, 4))
        tree:add(F.rdata_offset, tvb(8, 8))
        payload(tvb, 16, 0, ctx, false)
        return " off=" .. tostring(tvb(8, 8):uint64())
    end }

    -- A one-sided request or answer: its sub-header (32 bytes), then its payload.
    local function rma_op(tvb, tree, ctx)
        local op = tvb(0, 1):uint()
        local opname = W.rma_ops[op]
        tree:add(F.rma_op, tvb(0, 1))
        local flags = tree:add(F.rma_flags, tvb(1, 1))
        flags:add(F.rma_f_shared, tvb(1, 1))
        flags:add(F.rma_f_excl, tvb(1, 1))
        if op == 18 then
            tree:add(F.rma_nak_op, tvb(2, 1))
        else
            tree:add(F.rma_aop, tvb(2, 1))
        end
        tree:add(F.rma_dtype, tvb(3, 1))
        tree:add(F.rma_key, tvb(4, 4))
        tree:add(F.rma_req_id, tvb(8, 4))
        tree:add(F.rma_status, tvb(12, 4))
        tree:add(F.rma_offset, tvb(16, 8))
        tree:add(F.rma_len, tvb(24, 8))
        if not opname then
            tree:add_proto_expert_info(E.rma_op, string.format("One-sided operation %d", op))
            return string.format(" op=%d", op)
        end
        local text = string.format(" %s off=%s len=%s", opname, tostring(tvb(16, 8):uint64()),
            tostring(tvb(24, 8):uint64()))
        if op <= 7 then
            text = text .. string.format(" key=0x%08x", tvb(4, 4):uint())
        end
        local flag = tvb(1, 1):uint()
        if band(flag, W.RMA_F_EXCL) ~= 0 then
            text = text .. " +lock(excl)"
        elseif band(flag, W.RMA_F_SHARED) ~= 0 then
            text = text .. " +lock(shared)"
        end
        if op == 2 or op == 4 then
            text = text .. " " .. (W.rma_aops[tvb(2, 1):uint()] or "?") .. "/" ..
                (W.rma_dtypes[tvb(3, 1):uint()] or "?")
        end
        if op == 18 then
            local why = W.rma_errors[tvb(12, 4):uint()] or tostring(tvb(12, 4):uint())
            tree:add_proto_expert_info(E.rma_nak, "Refused: " .. why)
            text = text .. " (" .. why .. ")"
        end
        payload(tvb, 32, 0, ctx, false)
        return text
    end
    decoders[6] = { need = 32, name = "One-sided", fn = rma_op } -- RMA

    -- A record of a bundle of one-sided operations: one operation as a frame of its own
    -- would carry it.
    local function rma_record(one, rt, _, sub)
        if not one or one:len() < 32 then
            rt:add_proto_expert_info(E.sub_short, string.format(
                "A one-sided operation needs a 32-byte sub-header; the record holds %d bytes",
                one and one:len() or 0))
            return ""
        end
        return rma_op(one, rt:add(one(0, 32), "One-sided"), sub)
    end

    -- The challenge a HELLO carries and the one its sender answers (a HELLO_ACK answers
    -- the HELLO's); after the sub-header, one MAC per rail of the sender (rail 0 first),
    -- as many as the frame holds of the nrails it announces.
    local hello = { need = 32, name = "Handshake", fn = function(tvb, tree) -- HELLO, HELLO_ACK
        tree:add(F.hello_chal, tvb(0, 8))
        tree:add(F.hello_echo, tvb(8, 8))
        tree:add(F.hello_first_seq, tvb(16, 4))
        tree:add(F.hello_max_frame, tvb(20, 2))
        local nrails = tvb(22, 1):uint()
        tree:add(F.hello_nrails, tvb(22, 1))
        pad(tree, F.hello_pad, tvb(23, 1))
        tree:add(F.hello_features, tvb(24, 4))
        pad(tree, F.hello_pad2, tvb(28, 4))
        local k = 0
        while k < nrails and 32 + 6 * (k + 1) <= tvb:len() do
            tree:add(F.hello_rail_mac, tvb(32 + 6 * k, 6)):append_text(string.format(" (rail %d)", k))
            k = k + 1
        end
        return string.format(" first_seq=%d max_frame=%d rails=%d", tvb(16, 4):uint(),
            tvb(20, 2):uint(), nrails == 0 and 1 or nrails)
    end }
    decoders[21], decoders[22] = hello, hello

    local ping = { need = 16, name = "Liveness probe", fn = function(tvb, tree) -- PING, PONG
        tree:add(F.ping_token, tvb(0, 8))
        tree:add(F.ping_rcv_nxt, tvb(8, 4))
        pad(tree, F.ping_pad, tvb(12, 4))
        return ""
    end }
    decoders[24], decoders[25] = ping, ping

    -- LOSE: the frames lost, which alone go again; a LOSE without it (from a receiver
    -- that holds nothing, or of an earlier version) means "go back to the ACK".
    decoders[17] = { need = 8, optional = true, name = "Frames lost", fn = function(tvb, tree)
        tree:add(F.lose_first, tvb(0, 4))
        tree:add(F.lose_count, tvb(4, 4))
        return string.format(" lost=%d+%d", tvb(0, 4):uint(), tvb(4, 4):uint())
    end }

    -- Types without a sub-header: NOP, ACK, STOP, GO, CREDIT, CREDIT_REQ, BYE.
    local bare = { need = 0 }
    for _, t in ipairs({ 5, 16, 18, 19, 20, 23, 26 }) do
        decoders[t] = bare
    end

    -- Dissect what follows the header of a frame of a known type (tvb: those bytes, or
    -- nil when none follow) into tree; returns Info text.
    function S.dissect(ftype, tvb, tree, ctx)
        ctx.tree = tree
        if ctx.rma_bundle then -- no sub-header: the bundle itself
            return bundle(tvb, 0, tvb and tvb:len() or 0, ctx, "Operation", rma_record)
        end
        local d = decoders[ftype]
        local n = tvb and tvb:len() or 0
        if d.need == 0 then
            if n > 0 then
                tree:add(F.data, tvb())
                tree:add_proto_expert_info(E.trailing,
                    string.format("%s carries no sub-header, yet %d bytes follow", W.types[ftype], n))
            end
            return ""
        end
        if n == 0 and d.optional then
            return ""
        end
        if n < d.need then
            tree:add_proto_expert_info(E.sub_short, string.format(
                "%s needs a %d-byte sub-header; %d bytes follow the header", W.types[ftype], d.need, n))
            return ""
        end
        local st = tree:add(tvb(0, d.need), d.name)
        return d.fn(tvb, st, ctx)
    end

    function S.known(ftype)
        return decoders[ftype] ~= nil
    end

    return S
end
