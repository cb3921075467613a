-- SPDX-License-Identifier: BSD-3-Clause
-- pme.lua - Wireshark dissector for PME, MPI over raw Ethernet frames of PME's own
-- EtherType (0x88B5 unless configured), wire version 3 (src/pme_core/pme_wire.h).
--
-- Decodes the 72-byte header field by field, every sub-header, the VERSION_NAK (its
-- frozen part in any version, and its authentication part), and inside DATA and RTS
-- frames the message header of MPICH's ch4:pme netmod with the MPIDIG header behind it
-- (pme/netmod.lua). It verifies the CRC32C of frames sent with PME_AUTH=crc; a GMAC
-- (PME_AUTH=mac) needs the job's secret, which no capture holds, so it is reported as
-- not verified.
--
-- Install: `make install-wireshark` in PME's build tree (copies this file and pme/ into
-- the personal Lua plugin folder), or run `tshark -X lua_script:<path to this file>`.
-- The manual is doc/wireshark.md.
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local function load(name, ...)
    return dofile(here .. "pme/" .. name .. ".lua")(...)
end

local W = load("fields")
local crc32c = load("crc32c")
local netmod = load("netmod")
local sub = load("subheaders", W)
local F, E = W.f, W.e
local band = (bit32 or bit).band

local pme = Proto("pme", "PME (MPI over raw Ethernet)")
do
    local list = {}
    for _, field in pairs(F) do list[#list + 1] = field end
    pme.fields = list
    local experts = {}
    for _, e in pairs(E) do experts[#experts + 1] = e end
    pme.experts = experts
end

-- Preferences.
local UPPER_MPI, UPPER_NONE = 1, 2
pme.prefs.ethertype = Pref.string("EtherType", string.format("0x%04X", W.ETHERTYPE_DEFAULT),
    "EtherType PME runs on (PME_ETHERTYPE of the endpoints), e.g. 0x88B5")
pme.prefs.verify_crc = Pref.bool("Verify CRC32C", true,
    "Compute the CRC32C of frames sent with PME_AUTH=crc and compare")
pme.prefs.upper = Pref.enum("Message headers", UPPER_MPI,
    "What the message header inside DATA and RTS frames is: the ch4:pme netmod's (MPI "
        .. "jobs), or opaque bytes (pme_perf and other programs on pme_core)",
    { { 1, "mpi", UPPER_MPI }, { 2, "none", UPPER_NONE } }, true)

local registered -- the EtherType we are registered on

local function register()
    local value = tonumber(pme.prefs.ethertype)
    if not value or value < 0x600 or value > 0xFFFF then
        report_failure(string.format("PME: EtherType \"%s\" is not a number from 0x0600 to 0xFFFF; "
            .. "keeping 0x%04X", pme.prefs.ethertype, registered or W.ETHERTYPE_DEFAULT))
        value = registered or W.ETHERTYPE_DEFAULT
    end
    local table = DissectorTable.get("ethertype")
    if registered and registered ~= value then
        table:remove(registered, pme)
    end
    table:add(value, pme)
    registered = value
end

function pme.prefs_changed()
    register()
end

-- The check of a version 2 frame: CRC32C (verified here), GMAC (reported unverified),
-- or none. covered: bytes after the header under the check (hdr.len when it fits).
local function dissect_check(tvb, tree, flags, covered)
    local crc_flag = band(flags, W.flag.CHECK_CRC) ~= 0
    local mac_flag = band(flags, W.flag.CHECK_MAC) ~= 0
    local check = tvb(56, 16)
    local ct = tree:add(F.check, check)
    if crc_flag and mac_flag then
        ct:add_proto_expert_info(E.both_checks)
        return "Bad"
    end
    if mac_flag then
        ct:add(F.mac, check)
        local st = ct:add(F.check_status, W.check.UNVERIFIED):set_generated()
        st:add_proto_expert_info(E.mac_unverified)
        return "MAC"
    end
    if not crc_flag then
        ct:add(F.check_status, W.check.NOT_PRESENT):set_generated()
        if check:bytes():tohex() ~= string.rep("00", 16) then
            ct:add_proto_expert_info(E.check_junk)
        end
        ct:add_proto_expert_info(E.no_check)
        return "none"
    end
    ct:add(F.crc, tvb(56, 4))
    if tvb(60, 12):bytes():tohex() ~= string.rep("00", 12) then
        ct:add_proto_expert_info(E.check_junk)
    end
    if not pme.prefs.verify_crc or covered == nil then
        ct:add(F.check_status, W.check.UNVERIFIED):set_generated()
        return "CRC"
    end
    -- The CRC covers the header with hops_left and check[] zeroed, then hdr.len bytes.
    local input = tvb:raw(0, 16) .. "\0" .. tvb:raw(17, 39) .. string.rep("\0", 16)
    if covered > 0 then
        input = input .. tvb:raw(W.HDR_BYTES, covered)
    end
    local computed = crc32c.update(0, input)
    local stated = tvb(56, 4):uint()
    ct:add(F.crc_computed, computed):set_generated()
    if computed ~= stated then
        ct:add(F.check_status, W.check.BAD):set_generated()
        ct:add_proto_expert_info(E.crc_bad, string.format("CRC32C 0x%08x in the frame, 0x%08x computed",
            stated, computed))
        return "Bad CRC"
    end
    ct:add(F.check_status, W.check.GOOD):set_generated()
    return "CRC"
end

-- VERSION_NAK: its first 16 bytes mean the same in every version; from version 2 on
-- an authentication part follows.
local function dissect_nak(tvb, pinfo, tree)
    local n = tvb:len()
    local t = tree:add(pme, tvb(0, math.min(n, W.NAK_FROZEN_BYTES + W.NAK_AUTH_BYTES)),
        "PME VERSION_NAK")
    pinfo.cols.info = string.format("VERSION_NAK ep %d -> ep %d: speaks version %d",
        tvb(4, 2):uint(), tvb(0, 2):uint(), tvb(2, 1):uint())
    if n < W.NAK_FROZEN_BYTES then
        t:add_proto_expert_info(E.short, "VERSION_NAK shorter than its 16-byte frozen part")
        return n
    end
    t:add(F.nak_dst_ep, tvb(0, 2))
    t:add(F.nak_version, tvb(2, 1))
    t:add(F.nak_type, tvb(3, 1))
    t:add(F.nak_src_ep, tvb(4, 2))
    t:add(F.nak_pad, tvb(6, 2))
    t:add(F.nak_magic, tvb(8, 4))
    local ci = t:add(F.nak_crc, tvb(12, 4))
    local good = tvb(8, 4):uint() == W.NAK_MAGIC and crc32c.update(0, tvb:raw(0, 12)) == tvb(12, 4):uint()
    ci:add(F.nak_crc_status, good and W.check.GOOD or W.check.BAD):set_generated()
    if not good then
        t:add_proto_expert_info(E.nak_bad)
    end
    if n < W.NAK_FROZEN_BYTES + W.NAK_AUTH_BYTES then
        t:add_proto_expert_info(E.nak_v1)
        return W.NAK_FROZEN_BYTES
    end
    local a = tvb(W.NAK_FROZEN_BYTES, W.NAK_AUTH_BYTES)
    local at = t:add(a, "Authentication")
    at:add(F.nak_src_node, a(0, 4))
    at:add(F.nak_incarnation, a(4, 4))
    at:add(F.nak_job_id, a(8, 4))
    at:add(F.nak_auth_pad, a(12, 4))
    at:add(F.nak_nonce, a(16, 8))
    local tag = at:add(F.nak_tag, a(24, 16))
    if a(24, 16):bytes():tohex() == string.rep("00", 16) then
        tag:add_proto_expert_info(E.nak_unauth)
    else
        tag:add_proto_expert_info(E.mac_unverified)
    end
    return W.NAK_FROZEN_BYTES + W.NAK_AUTH_BYTES
end

local function type_name(t)
    return W.types[t] or ("type " .. t)
end

function pme.dissector(tvb, pinfo, tree)
    local n = tvb:len()
    pinfo.cols.protocol = "PME"
    if n < 4 then
        tree:add(pme, tvb()):add_proto_expert_info(E.short)
        return n
    end
    local version, ftype = tvb(2, 1):uint(), tvb(3, 1):uint()
    if ftype == W.T_VERSION_NAK then
        return dissect_nak(tvb, pinfo, tree)
    end
    if version ~= W.VERSION then
        local t = tree:add(pme, tvb())
        t:add(F.dst_ep, tvb(0, 2))
        t:add(F.version, tvb(2, 1)):add_proto_expert_info(E.version, string.format(
            "Wire version %d: this dissector decodes version %d (only the prefix every version shares is shown)",
            version, W.VERSION))
        t:add(F.type, tvb(3, 1))
        pinfo.cols.info = string.format("Wire version %d, type %d", version, ftype)
        return n
    end
    if n < W.HDR_BYTES then
        local t = tree:add(pme, tvb())
        t:add_proto_expert_info(E.short, string.format(
            "%d bytes: the version %d header alone is %d", n, W.VERSION, W.HDR_BYTES))
        pinfo.cols.info = "Truncated PME frame"
        return n
    end

    local len = tvb(6, 2):uint()
    local fits = W.HDR_BYTES + len <= n
    local body_len = fits and len or n - W.HDR_BYTES
    local t = tree:add(pme, tvb(0, W.HDR_BYTES + body_len))
    t:add(F.dst_ep, tvb(0, 2))
    t:add(F.version, tvb(2, 1))
    local ti = t:add(F.type, tvb(3, 1))
    t:add(F.src_ep, tvb(4, 2))
    local li = t:add(F.len, tvb(6, 2))
    t:add(F.dst_node, tvb(8, 4))
    t:add(F.src_node, tvb(12, 4))
    t:add(F.hops_left, tvb(16, 1))
    t:add(F.rail, tvb(17, 1))
    local flags = tvb(18, 2):uint()
    local fi = t:add(F.flags, tvb(18, 2))
    for _, k in ipairs({ "f_ack_valid", "f_ack_req", "f_first", "f_last", "f_check_crc",
                         "f_check_mac", "f_kernel" }) do
        fi:add(F[k], tvb(18, 2))
    end
    local fr = fi:add(F.f_reserved, tvb(18, 2))
    if band(flags, W.FLAGS_RESERVED) ~= 0 then
        fr:add_proto_expert_info(E.reserved)
    end
    t:add(F.job_id, tvb(20, 4))
    t:add(F.seq, tvb(24, 4))
    t:add(F.ack, tvb(28, 4))
    t:add(F.credit, tvb(32, 4))
    local ai = t:add(F.aux, tvb(36, 2))
    local aux = tvb(36, 2):uint()
    if ftype == 3 then
        ai:add(F.cts_discard, tvb(36, 2))
    elseif ftype == 1 then
        ai:add(F.data_bundle, tvb(36, 2))
    elseif ftype == 6 then
        ai:add(F.rma_bundle, tvb(36, 2))
    end
    local function reserved(field, off, len)
        local item = t:add(field, tvb(off, len))
        if tvb(off, len):uint() ~= 0 then
            item:add_proto_expert_info(E.reserved)
        end
    end
    reserved(F.reserved, 38, 2)
    t:add(F.incarnation, tvb(40, 4))
    t:add(F.order, tvb(44, 4))
    t:add(F.nonce, tvb(48, 8))

    if not fits then
        li:add_proto_expert_info(E.len, string.format(
            "The header says %d bytes follow it; the frame has %d", len, n - W.HDR_BYTES))
    elseif n > W.HDR_BYTES + len then
        -- Never Ethernet padding: a PME frame is longer than the 60-byte minimum.
        li:add_proto_expert_info(E.trailing, string.format(
            "%d bytes follow the %d the header states", n - W.HDR_BYTES - len, len))
    end
    local check = dissect_check(tvb, t, flags, fits and len or nil)

    local info = string.format("%-11s %08x:%d -> %08x:%d", type_name(ftype), tvb(12, 4):uint(),
        tvb(4, 2):uint(), tvb(8, 4):uint(), tvb(0, 2):uint())
    if ftype >= 1 and ftype <= 5 then
        info = info .. " seq=" .. tvb(24, 4):uint()
    end
    if band(flags, W.flag.ACK_VALID) ~= 0 then
        info = info .. " ack=" .. tvb(28, 4):uint()
    end
    if not sub.known(ftype) then
        ti:add_proto_expert_info(E.type, "Frame type " .. ftype .. " is not one of wire version 3's")
    else
        local ctx = { pinfo = pinfo, root = tree, discard = ftype == 3 and aux % 2 == 1,
                      bundle = ftype == 1 and aux == W.DATA_BUNDLE,
                      rma_bundle = ftype == 6 and aux == W.RMA_BUNDLE }
        if pme.prefs.upper == UPPER_MPI then
            ctx.upper = netmod.dissect
        end
        local body = body_len > 0 and tvb(W.HDR_BYTES, body_len):tvb() or nil
        info = info .. sub.dissect(ftype, body, t, ctx)
    end
    if check ~= "CRC" then
        info = info .. " [" .. check .. "]"
    end
    pinfo.cols.info = info
    return W.HDR_BYTES + body_len
end

register()
