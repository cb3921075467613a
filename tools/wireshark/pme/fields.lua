-- SPDX-License-Identifier: BSD-3-Clause
-- fields.lua - what PME's wire version 2 is made of, for the dissector: frame types,
-- flags, and one ProtoField per field of the header and of every sub-header, with the
-- expert infos the dissector raises. The definition is src/pme_core/pme_wire.h; the
-- names and offsets here follow it field by field.
--
-- Loaded by ../pme.lua; returns a constructor and creates nothing when loaded.
return function()
    local W = {}

    W.ETHERTYPE_DEFAULT = 0x88B5
    W.VERSION = 3
    W.HDR_BYTES = 72
    W.NAK_FROZEN_BYTES = 16
    W.NAK_AUTH_BYTES = 40
    W.NAK_MAGIC = 0x504D4556 -- "PMEV"
    W.T_VERSION_NAK = 255

    W.types = {
        [1] = "DATA", [2] = "RTS", [3] = "CTS", [4] = "RDATA", [5] = "NOP", [6] = "RMA",
        [16] = "ACK", [17] = "LOSE", [18] = "STOP", [19] = "GO", [20] = "CREDIT",
        [21] = "HELLO", [22] = "HELLO_ACK", [23] = "CREDIT_REQ", [24] = "PING",
        [25] = "PONG", [26] = "BYE", [255] = "VERSION_NAK",
    }

    -- One-sided communication (PME_T_RMA): operations, errors, accumulate operations and
    -- element types, lock flags.
    W.rma_ops = {
        [1] = "PUT", [2] = "ACC", [3] = "GET", [4] = "FETCH", [5] = "CAS", [6] = "LOCK",
        [7] = "UNLOCK", [16] = "DATA", [17] = "DONE", [18] = "NAK",
    }
    W.rma_errors = { [0] = "none", [1] = "no such window", [2] = "outside the window",
        [3] = "bad operation", [4] = "unlock without lock" }
    W.rma_aops = { [0] = "REPLACE", [1] = "NO_OP", [2] = "SUM", [3] = "PROD", [4] = "MAX",
        [5] = "MIN", [6] = "LAND", [7] = "LOR", [8] = "LXOR", [9] = "BAND", [10] = "BOR",
        [11] = "BXOR" }
    W.rma_dtypes = { [0] = "int8", [1] = "uint8", [2] = "int16", [3] = "uint16", [4] = "int32",
        [5] = "uint32", [6] = "int64", [7] = "uint64", [8] = "float", [9] = "double" }
    W.RMA_F_SHARED, W.RMA_F_EXCL = 0x01, 0x02

    W.flag = {
        ACK_VALID = 0x0001, ACK_REQ = 0x0002, FIRST = 0x0004, LAST = 0x0008,
        CHECK_CRC = 0x0010, CHECK_MAC = 0x0020, KERNEL = 0x0040,
    }
    W.FLAGS_RESERVED = 0xFF80
    W.DATA_BUNDLE = 1 -- hdr.aux of DATA: a bundle of small messages
    W.RMA_BUNDLE = 1 -- hdr.aux of RMA: a bundle of one-sided operations

    -- Wireshark's own names for a checksum's status (proto.h, PROTO_CHECKSUM_E_*), so
    -- that pme.check.status reads like tcp.checksum.status.
    W.check = { BAD = 0, GOOD = 1, UNVERIFIED = 2, NOT_PRESENT = 3 }
    local check_status = { [0] = "Bad", [1] = "Good", [2] = "Unverified", [3] = "Not present" }

    local F = {}
    local function field(key, f) F[key] = f end
    local u8, u16, u32, u64 = ProtoField.uint8, ProtoField.uint16, ProtoField.uint32,
        ProtoField.uint64
    local DEC, HEX = base.DEC, base.HEX

    -- The fixed header (72 bytes).
    field("dst_ep", u16("pme.dst_ep", "Destination endpoint", DEC))
    field("version", u8("pme.version", "Wire version", DEC))
    field("type", u8("pme.type", "Type", DEC, W.types))
    field("src_ep", u16("pme.src_ep", "Source endpoint", DEC))
    field("len", u16("pme.len", "Length after the header", DEC))
    field("dst_node", u32("pme.dst_node", "Destination node", HEX))
    field("src_node", u32("pme.src_node", "Source node", HEX))
    field("hops_left", u8("pme.hops_left", "Hops left", DEC))
    field("rail", u8("pme.rail", "Rail", DEC))
    field("flags", u16("pme.flags", "Flags", HEX))
    field("f_ack_valid", ProtoField.bool("pme.flags.ack_valid", "ACK valid", 16, nil, W.flag.ACK_VALID,
        "ack and credit describe the reverse direction"))
    field("f_ack_req", ProtoField.bool("pme.flags.ack_req", "ACK requested", 16, nil, W.flag.ACK_REQ,
        "acknowledge at once"))
    field("f_first", ProtoField.bool("pme.flags.first", "First fragment", 16, nil, W.flag.FIRST))
    field("f_last", ProtoField.bool("pme.flags.last", "Last fragment", 16, nil, W.flag.LAST))
    field("f_check_crc", ProtoField.bool("pme.flags.check_crc", "Check is CRC32C", 16, nil,
        W.flag.CHECK_CRC))
    field("f_check_mac", ProtoField.bool("pme.flags.check_mac", "Check is GMAC", 16, nil,
        W.flag.CHECK_MAC))
    field("f_kernel", ProtoField.bool("pme.flags.kernel", "Made by the kernel driver", 16, nil,
        W.flag.KERNEL))
    field("f_reserved", u16("pme.flags.reserved", "Reserved flags", HEX, nil, W.FLAGS_RESERVED))
    field("job_id", u32("pme.job_id", "Job id", HEX))
    field("seq", u32("pme.seq", "Sequence number", DEC))
    field("ack", u32("pme.ack", "Acknowledged up to", DEC))
    field("credit", u32("pme.credit", "Credit limit granted", DEC))
    field("aux", u16("pme.aux", "Aux", HEX))
    field("cts_discard", ProtoField.bool("pme.aux.cts_discard", "Offer discarded", 16, nil, 0x0001))
    field("data_bundle", ProtoField.bool("pme.aux.bundle", "Bundle of messages", 16, nil,
        W.DATA_BUNDLE))
    field("rma_bundle", ProtoField.bool("pme.aux.rma_bundle", "Bundle of one-sided operations",
        16, nil, W.RMA_BUNDLE))
    field("reserved", u16("pme.reserved", "Reserved", HEX))
    field("incarnation", u32("pme.incarnation", "Incarnation", HEX))
    field("order", u32("pme.order", "Order number (in-order items; 0: none)", DEC))
    field("nonce", u64("pme.nonce", "Nonce (frame counter)", DEC))
    field("check", ProtoField.bytes("pme.check", "Check"))
    field("crc", u32("pme.crc", "CRC32C", HEX))
    field("crc_computed", u32("pme.crc.computed", "CRC32C computed", HEX))
    field("mac", ProtoField.bytes("pme.mac", "GMAC tag"))
    field("check_status", u8("pme.check.status", "Check status", DEC, check_status))

    -- Sub-headers.
    field("frag_total", u32("pme.frag.total", "Message bytes (header + data)", DEC))
    field("frag_offset", u32("pme.frag.offset", "Offset", DEC))
    field("frag_hdr_len", u16("pme.frag.hdr_len", "Message header bytes", DEC))
    field("frag_pad", u16("pme.frag.pad", "Padding", HEX))
    field("bundle_count", u16("pme.bundle.count", "Records in the bundle", DEC))
    field("bundle_pad", u16("pme.bundle.pad", "Padding", HEX))
    field("bundle_pad2", u32("pme.bundle.pad2", "Padding", HEX))
    field("rec_len", u32("pme.bundle.rec_len", "Record bytes (header + data)", DEC))
    field("rec_hdr_len", u16("pme.bundle.rec_hdr_len", "Message header bytes", DEC))
    field("rec_pad", u16("pme.bundle.rec_pad", "Padding", HEX))
    field("rts_send_id", u32("pme.rts.send_id", "Send id", HEX))
    field("rts_hdr_len", u16("pme.rts.hdr_len", "Message header bytes", DEC))
    field("rts_pad", u16("pme.rts.pad", "Padding", HEX))
    field("rts_total", u64("pme.rts.total", "Data bytes offered", DEC))
    field("cts_send_id", u32("pme.cts.send_id", "Send id", HEX))
    field("cts_rndv_id", u32("pme.cts.rndv_id", "Rendezvous id", HEX))
    field("cts_accepted", u64("pme.cts.accepted", "Bytes accepted", DEC))
    field("rdata_rndv_id", u32("pme.rdata.rndv_id", "Rendezvous id", HEX))
    field("rdata_pad", u32("pme.rdata.pad", "Padding", HEX))
    field("rdata_offset", u64("pme.rdata.offset", "Offset", DEC))
    field("hello_chal", u64("pme.hello.chal", "Challenge", HEX))
    field("hello_echo", u64("pme.hello.echo", "Challenge answered", HEX))
    field("hello_first_seq", u32("pme.hello.first_seq", "First sequence number", DEC))
    field("hello_max_frame", u16("pme.hello.max_frame", "Largest frame taken", DEC))
    field("hello_nrails", u8("pme.hello.nrails", "Rails", DEC))
    field("hello_pad", u8("pme.hello.pad", "Padding", HEX))
    field("hello_pad2", u32("pme.hello.pad2", "Padding", HEX))
    field("hello_features", u32("pme.hello.features", "Features", HEX))
    field("hello_rail_mac", ProtoField.ether("pme.hello.rail_mac", "Rail NIC"))
    field("ping_token", u64("pme.ping.token", "Token", HEX))
    field("ping_rcv_nxt", u32("pme.ping.rcv_nxt", "Next expected sequence number", DEC))
    field("ping_pad", u32("pme.ping.pad", "Padding", HEX))
    field("lose_first", u32("pme.lose.first", "First frame lost", DEC))
    field("lose_count", u32("pme.lose.count", "Frames lost", DEC))
    field("rma_op", u8("pme.rma.op", "Operation", DEC, W.rma_ops))
    field("rma_flags", u8("pme.rma.flags", "Lock flags", HEX))
    field("rma_f_shared", ProtoField.bool("pme.rma.flags.shared", "Takes the lock, shared", 8, nil,
        W.RMA_F_SHARED))
    field("rma_f_excl", ProtoField.bool("pme.rma.flags.excl", "Takes the lock, exclusive", 8, nil,
        W.RMA_F_EXCL))
    field("rma_aop", u8("pme.rma.aop", "Accumulate operation", DEC, W.rma_aops))
    field("rma_nak_op", u8("pme.rma.nak_op", "Refused operation", DEC, W.rma_ops))
    field("rma_dtype", u8("pme.rma.dtype", "Element type", DEC, W.rma_dtypes))
    field("rma_key", u32("pme.rma.key", "Window key", HEX))
    field("rma_req_id", u32("pme.rma.req_id", "Request id", HEX))
    field("rma_status", u32("pme.rma.status", "Refusal", DEC, W.rma_errors))
    field("rma_offset", u64("pme.rma.offset", "Offset", DEC))
    field("rma_len", u64("pme.rma.len", "Operation bytes", DEC))
    field("msg_hdr", ProtoField.bytes("pme.msg_hdr", "Message header"))
    field("data", ProtoField.bytes("pme.data", "Data"))

    -- VERSION_NAK: the frozen part, and the authentication part of version 2.
    field("nak_dst_ep", u16("pme.nak.dst_ep", "Destination endpoint", DEC))
    field("nak_version", u8("pme.nak.version", "Version spoken", DEC))
    field("nak_type", u8("pme.nak.type", "Type", DEC, W.types))
    field("nak_src_ep", u16("pme.nak.src_ep", "Source endpoint", DEC))
    field("nak_pad", u16("pme.nak.pad", "Padding", HEX))
    field("nak_magic", u32("pme.nak.magic", "Magic", HEX))
    field("nak_crc", u32("pme.nak.crc", "CRC32C of the frozen part", HEX))
    field("nak_crc_status", u8("pme.nak.crc.status", "Frozen part CRC status", DEC, check_status))
    field("nak_src_node", u32("pme.nak.src_node", "Source node", HEX))
    field("nak_incarnation", u32("pme.nak.incarnation", "Incarnation", HEX))
    field("nak_job_id", u32("pme.nak.job_id", "Job id", HEX))
    field("nak_auth_pad", u32("pme.nak.auth_pad", "Padding", HEX))
    field("nak_nonce", u64("pme.nak.nonce", "Nonce", DEC))
    field("nak_tag", ProtoField.bytes("pme.nak.tag", "GMAC tag"))
    W.f = F

    local E = {}
    local g, s = expert.group, expert.severity
    local function exp(key, abbr, text, group, severity)
        E[key] = ProtoExpert.new("pme.expert." .. abbr, text, group, severity)
    end
    exp("crc_bad", "crc_bad", "CRC32C does not match", g.CHECKSUM, s.ERROR)
    exp("mac_unverified", "mac_unverified",
        "GMAC tag not verified: that needs the job's secret, which a capture does not hold",
        g.CHECKSUM, s.NOTE)
    exp("no_check", "no_check", "No CRC or MAC (PME_AUTH=none): corruption would go unnoticed",
        g.CHECKSUM, s.NOTE)
    exp("both_checks", "both_checks", "Both CHECK_CRC and CHECK_MAC are set", g.MALFORMED, s.ERROR)
    exp("check_junk", "check_junk", "Check bytes that no check uses are not zero", g.PROTOCOL, s.WARN)
    exp("version", "version", "Unknown wire version", g.PROTOCOL, s.WARN)
    exp("type", "type", "Unknown frame type", g.PROTOCOL, s.WARN)
    exp("short", "short", "Frame too short for the PME header", g.MALFORMED, s.ERROR)
    exp("len", "len", "Length does not fit the frame", g.MALFORMED, s.ERROR)
    exp("sub_short", "sub_short", "Too short for its sub-header", g.MALFORMED, s.ERROR)
    exp("bounds", "bounds", "Fragment lies outside its message", g.MALFORMED, s.ERROR)
    exp("rma_op", "rma_op", "Unknown one-sided operation", g.PROTOCOL, s.WARN)
    exp("rma_nak", "rma_nak", "One-sided request refused", g.RESPONSE_CODE, s.NOTE)
    exp("reserved", "reserved", "Reserved field is not zero", g.PROTOCOL, s.WARN)
    exp("trailing", "trailing", "Bytes after the length the header states", g.PROTOCOL, s.NOTE)
    exp("nak_bad", "nak_bad", "Not a valid VERSION_NAK (magic or CRC of the frozen part wrong)",
        g.MALFORMED, s.ERROR)
    exp("nak_v1", "nak_v1", "VERSION_NAK without an authentication part (wire version 1)",
        g.PROTOCOL, s.NOTE)
    exp("nak_unauth", "nak_unauth", "VERSION_NAK not authenticated: its sender holds no MAC key",
        g.SECURITY, s.NOTE)
    W.e = E

    return W
end
