-- SPDX-License-Identifier: BSD-3-Clause
-- netmod.lua - the message header that MPICH's ch4:pme netmod puts in front of every
-- message, and the MPIDIG header after it.
--
-- The netmod's header (src/mpid/ch4/netmod/pme/pme_am_wire.h, MPIDI_PME_wire_hdr_t) is
-- 8 bytes: handler id, source and destination VCI, kind, and a 32-bit tag (the port
-- tag of a connect/accept message). For an active message (kind AM) the MPIDIG header
-- of that handler follows, padded to 8 bytes. Both are written in the sender's own
-- byte order, not in network order: little-endian on x86-64 and ARM64, which is what
-- this decodes. The MPIDIG layouts are MPICH 4.0.2's (src/mpid/ch4/src/mpidig.h for the
-- handler ids, ch4_types.h for the structures) on an LP64 machine built with the
-- default 16-bit context ids.
--
-- Loaded by ../pme.lua; returns a constructor and creates nothing when loaded.
return function()
    local M = {}
    local proto = Proto("pmempi", "MPI over PME (ch4:pme netmod header)")
    M.proto = proto

    M.WIRE_HDR_BYTES = 8
    M.HANDLERS_MAX = 64 -- MPIDI_AM_HANDLERS_MAX: the netmod drops ids at or beyond it
    local KIND_AM, KIND_DYNPROC = 0, 1

    -- MPICH 4.0.2's static MPIDIG handlers, in the order of their enum.
    local handler_names = {
        "SEND", "SEND_CTS", "SEND_DATA", "SSEND_ACK",
        "PART_SEND_INIT", "PART_CTS", "PART_SEND_DATA",
        "PUT_REQ", "PUT_ACK", "PUT_DT_REQ", "PUT_DAT_REQ", "PUT_DT_ACK",
        "GET_REQ", "GET_ACK",
        "ACC_REQ", "ACC_ACK", "ACC_DT_REQ", "ACC_DAT_REQ", "ACC_DT_ACK",
        "GET_ACC_REQ", "GET_ACC_ACK", "GET_ACC_DT_REQ", "GET_ACC_DAT_REQ", "GET_ACC_DT_ACK",
        "CSWAP_REQ", "CSWAP_ACK",
        "WIN_COMPLETE", "WIN_POST", "WIN_LOCK", "WIN_LOCK_ACK", "WIN_UNLOCK",
        "WIN_UNLOCK_ACK", "WIN_LOCKALL", "WIN_LOCKALL_ACK", "WIN_UNLOCKALL",
        "WIN_UNLOCKALL_ACK",
        "COMM_ABORT", "IPC_ACK", "OFI_INTERNAL_HANDLER_CONTROL", "OFI_AM_RDMA_READ_ACK",
    }
    local handlers = {}
    for i, name in ipairs(handler_names) do
        -- the last three belong to MPIDI (IPC and OFI), the others to MPIDIG
        handlers[i - 1] = (i - 1 >= 37 and "MPIDI_" or "MPIDIG_") .. name
    end
    local H = {}
    for id, name in pairs(handlers) do H[name] = id end

    local kinds = { [KIND_AM] = "AM (MPIDIG active message)",
                    [KIND_DYNPROC] = "DYNPROC (connect/accept)" }

    local DEC, HEX = base.DEC, base.HEX
    local f = {
        handler = ProtoField.uint8("pmempi.handler", "MPIDIG handler", DEC, handlers),
        src_vci = ProtoField.uint8("pmempi.src_vci", "Source VCI", DEC),
        dst_vci = ProtoField.uint8("pmempi.dst_vci", "Destination VCI", DEC),
        kind = ProtoField.uint8("pmempi.kind", "Kind", DEC, kinds),
        port_tag = ProtoField.uint32("pmempi.port_tag", "Port tag", DEC),
        am_hdr = ProtoField.bytes("pmempi.am_hdr", "MPIDIG header"),
        -- MPIDIG_hdr_t (MPIDIG_SEND): 48 bytes.
        src_rank = ProtoField.int32("pmempi.send.src_rank", "Source rank", DEC),
        tag = ProtoField.int32("pmempi.send.tag", "Tag", DEC),
        context_id = ProtoField.uint16("pmempi.send.context_id", "Context id", HEX),
        error_bits = ProtoField.uint32("pmempi.send.error_bits", "Error bits", HEX),
        sflags = ProtoField.uint32("pmempi.send.flags", "Flags", HEX),
        sflag_sync = ProtoField.bool("pmempi.send.flags.sync", "Synchronous (MPI_Ssend)", 32, nil, 0x1),
        sflag_rts = ProtoField.bool("pmempi.send.flags.rts", "MPIDIG rendezvous (RTS)", 32, nil, 0x2),
        sflag_rndv = ProtoField.uint32("pmempi.send.flags.rndv_id", "Rendezvous protocol id", DEC, nil,
            0xFF00),
        data_sz = ProtoField.int64("pmempi.send.data_sz", "Data size", DEC),
        rndv_hdr_sz = ProtoField.int64("pmempi.send.rndv_hdr_sz", "Rendezvous header size", DEC),
        -- Request handles: the sender's and receiver's pointers, echoed back.
        sreq = ProtoField.uint64("pmempi.sreq", "Send request", HEX),
        rreq = ProtoField.uint64("pmempi.rreq", "Receive request", HEX),
        -- MPIDIG_win_cntrl_msg_t (the WIN_* handlers).
        win_id = ProtoField.uint64("pmempi.win.win_id", "Window id", HEX),
        origin_rank = ProtoField.uint32("pmempi.win.origin_rank", "Origin rank", DEC),
        lock_type = ProtoField.int16("pmempi.win.lock_type", "Lock type", DEC),
    }
    local fl = {}
    for _, v in pairs(f) do fl[#fl + 1] = v end
    proto.fields = fl

    local e = {
        short = ProtoExpert.new("pmempi.expert.short", "Message header shorter than the netmod's 8 bytes",
            expert.group.MALFORMED, expert.severity.ERROR),
        kind = ProtoExpert.new("pmempi.expert.kind", "Unknown kind: the netmod drops this message",
            expert.group.PROTOCOL, expert.severity.WARN),
        handler = ProtoExpert.new("pmempi.expert.handler",
            "Handler id at or beyond MPIDI_AM_HANDLERS_MAX: the netmod drops this message",
            expert.group.PROTOCOL, expert.severity.WARN),
        am_short = ProtoExpert.new("pmempi.expert.am_short",
            "MPIDIG header shorter than its handler's structure (read zero-padded)",
            expert.group.MALFORMED, expert.severity.WARN),
    }
    proto.experts = { e.short, e.kind, e.handler, e.am_short }

    -- MPIDIG_hdr_t on LP64: src_rank 0, tag 4, context_id 8 (2 bytes, 2 of padding),
    -- error_bits 12, flags 16 (4 of padding), sreq_ptr 24, data_sz 32, rndv_hdr_sz 40.
    local function send_hdr(tvb, t)
        t:add_le(f.src_rank, tvb(0, 4))
        t:add_le(f.tag, tvb(4, 4))
        t:add_le(f.context_id, tvb(8, 2))
        t:add_le(f.error_bits, tvb(12, 4))
        local ft = t:add_le(f.sflags, tvb(16, 4))
        ft:add_le(f.sflag_sync, tvb(16, 4))
        ft:add_le(f.sflag_rts, tvb(16, 4))
        ft:add_le(f.sflag_rndv, tvb(16, 4))
        t:add_le(f.sreq, tvb(24, 8))
        t:add_le(f.data_sz, tvb(32, 8))
        t:add_le(f.rndv_hdr_sz, tvb(40, 8))
        return string.format(" rank=%d tag=%d ctx=0x%x size=%s", tvb(0, 4):le_int(), tvb(4, 4):le_int(),
            tvb(8, 2):le_uint(), tostring(tvb(32, 8):le_int64()))
    end

    local function win_cntrl(tvb, t)
        t:add_le(f.win_id, tvb(0, 8))
        t:add_le(f.origin_rank, tvb(8, 4))
        t:add_le(f.lock_type, tvb(12, 2))
        return string.format(" origin=%d", tvb(8, 4):le_uint())
    end

    -- Decoders by handler: bytes of the structure they read, and the function.
    local decoders = {
        [H.MPIDIG_SEND] = { 48, send_hdr },
        [H.MPIDIG_SEND_CTS] = { 16, function(tvb, t)
            t:add_le(f.sreq, tvb(0, 8)); t:add_le(f.rreq, tvb(8, 8)); return "" end },
        [H.MPIDIG_SEND_DATA] = { 8, function(tvb, t) t:add_le(f.rreq, tvb(0, 8)); return "" end },
        [H.MPIDIG_SSEND_ACK] = { 8, function(tvb, t) t:add_le(f.sreq, tvb(0, 8)); return "" end },
    }
    for id = H.MPIDIG_WIN_COMPLETE, H.MPIDIG_WIN_UNLOCKALL_ACK do
        decoders[id] = { 14, win_cntrl }
    end

    -- Dissect a message header (the first hdr_len bytes of a message) in tree; returns
    -- text for the Info column.
    function M.dissect(tvb, pinfo, tree)
        local t = tree:add(proto, tvb())
        if tvb:len() < M.WIRE_HDR_BYTES then
            t:add_proto_expert_info(e.short)
            return " [short netmod header]"
        end
        local id, kind = tvb(0, 1):uint(), tvb(3, 1):uint()
        t:add(f.handler, tvb(0, 1))
        t:add(f.src_vci, tvb(1, 1))
        t:add(f.dst_vci, tvb(2, 1))
        local kt = t:add(f.kind, tvb(3, 1))
        t:add_le(f.port_tag, tvb(4, 4))
        if kind == KIND_DYNPROC then
            t:append_text(", connect/accept, port tag " .. tvb(4, 4):le_uint())
            return " DYNPROC tag=" .. tvb(4, 4):le_uint()
        end
        if kind ~= KIND_AM then
            kt:add_proto_expert_info(e.kind)
            return " [unknown kind " .. kind .. "]"
        end
        local name = handlers[id] or (id < M.HANDLERS_MAX and ("dynamic handler " .. id))
        if not name then
            t:add_proto_expert_info(e.handler)
            return " [handler " .. id .. "]"
        end
        t:append_text(", " .. name)
        local am_len = tvb:len() - M.WIRE_HDR_BYTES
        if am_len == 0 then
            return " " .. name
        end
        local am = tvb(M.WIRE_HDR_BYTES, am_len)
        local at = t:add(f.am_hdr, am)
        local d = decoders[id]
        if not d then
            return " " .. name
        end
        if am_len < d[1] then
            at:add_proto_expert_info(e.am_short)
            return " " .. name
        end
        return " " .. name .. d[2](am:tvb(), at)
    end

    return M
end
