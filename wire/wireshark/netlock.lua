-- Wireshark dissector for netlock, the NetLock-style lock protocol on UDP port 8888.
--
-- The layout is docs/protocol.md and wire/wire.go: one 48-byte header in network byte order per
-- datagram. A control message (push-back, overflow, queue-empty, admin) carries the 64-bit rack key
-- after the header; an admin stats reply carries lock records after the key, an admin residents
-- reply lock ids. Other bytes after the header are reserved and shown as "trailer".
--
-- Use:
--   wireshark -X lua_script:wire/wireshark/netlock.lua capture.pcap
--   tshark -X lua_script:wire/wireshark/netlock.lua -r capture.pcap -V
-- or copy the file into Wireshark's personal plugins folder (Help > About > Folders).
-- Display filters: netlock, netlock.op == 3, netlock.lock == 42, netlock.flags.reply == 1, ...
--
-- Keep the offsets, names and numbers in sync with wire/wire.go and wire/srvadmin.go;
-- wire/layer/tshark_test.go checks this file against packets built by the Go code.

local netlock = Proto("netlock", "NetLock lock protocol")

local HEADER_LEN = 48
local VERSION = 1
local PORT = 8888

local op_names = {
    [0] = "acquire",
    [1] = "release",
    [2] = "push-back",
    [3] = "grant",
    [4] = "reject",
    [5] = "overflow",
    [6] = "queue-empty",
    [7] = "lease-probe",
    [8] = "admin",
}
local OP_ADMIN = 8

local mode_names = {
    [0] = "shared",
    [1] = "exclusive",
}
local mode_short = { [0] = "S", [1] = "X" }

local status_names = {
    [0] = "ok",
    [1] = "quota",
    [2] = "would-block",
    [3] = "not-holder",
    [4] = "lease-expired",
    [5] = "not-owner",
    [6] = "shutdown",
    [7] = "queue-full",
    [8] = "bad-request",
    [9] = "overloaded",
    [10] = "wait-expired",
}

local admin_names = {
    [1] = "ping",
    [2] = "lease-sweep",
    [3] = "reset-lock",
    [4] = "rdma-join",
    [5] = "rdma-peer",
    [6] = "token-floor",
    [7] = "yield",
    [8] = "adopt",
    [9] = "stats",
    [10] = "takeover",
    [11] = "residents",
    [16] = "switch-probe",
    [17] = "switch-reset",
    [18] = "switch-force-release",
    [19] = "switch-token-base",
    [20] = "switch-get-cookie",
    [21] = "switch-set-cookie",
    [22] = "switch-set-buffered",
}
local ADMIN_STATS = 9
local ADMIN_RESIDENTS = 11
local KEY_LEN = 8
local STAT_LEN = 16

-- Control messages carry the rack key after the header.
local control_ops = { [2] = true, [5] = true, [6] = true, [8] = true }

local FLAG_REPLY   = 0x01
local FLAG_RETRY   = 0x02
local FLAG_TRY     = 0x04
local FLAG_FWD     = 0x08
local FLAG_RENEWED = 0x10
local FLAG_BATCH   = 0x20  -- the datagram is a batch of 48-byte headers (docs/protocol.md, "Batches")
local flag_bits = {
    { FLAG_REPLY, "reply" },
    { FLAG_RETRY, "retry" },
    { FLAG_TRY, "try" },
    { FLAG_FWD, "fwd" },
    { FLAG_RENEWED, "renewed" },
    { FLAG_BATCH, "batch" },
}

local f = netlock.fields
f.version     = ProtoField.uint8("netlock.version", "Version", base.DEC)
f.op          = ProtoField.uint8("netlock.op", "Op", base.DEC, op_names)
f.mode        = ProtoField.uint8("netlock.mode", "Mode", base.DEC, mode_names)
f.flags       = ProtoField.uint8("netlock.flags", "Flags", base.HEX)
f.flag_reply  = ProtoField.bool("netlock.flags.reply", "Reply", 8, nil, FLAG_REPLY)
f.flag_retry  = ProtoField.bool("netlock.flags.retry", "Retry", 8, nil, FLAG_RETRY)
f.flag_try    = ProtoField.bool("netlock.flags.try", "Try", 8, nil, FLAG_TRY)
f.flag_fwd    = ProtoField.bool("netlock.flags.fwd", "Forwarded", 8, nil, FLAG_FWD)
f.flag_renew  = ProtoField.bool("netlock.flags.renewed", "Renewed", 8, nil, FLAG_RENEWED)
f.flag_batch  = ProtoField.bool("netlock.flags.batch", "Batch", 8, nil, FLAG_BATCH)
f.flag_rsvd   = ProtoField.uint8("netlock.flags.reserved", "Reserved", base.HEX, nil, 0xc0)
f.status      = ProtoField.uint8("netlock.status", "Status", base.DEC, status_names)
f.admin       = ProtoField.uint8("netlock.admin", "Admin operation", base.DEC, admin_names)
f.priority    = ProtoField.uint8("netlock.priority", "Priority", base.DEC)
f.tenant      = ProtoField.uint16("netlock.tenant", "Tenant", base.DEC)
f.lock        = ProtoField.uint32("netlock.lock", "Lock", base.DEC)
f.txn         = ProtoField.uint64("netlock.txn", "Transaction", base.DEC)
f.token       = ProtoField.uint64("netlock.token", "Fencing token", base.DEC)
f.timestamp   = ProtoField.uint64("netlock.timestamp", "Timestamp (ns)", base.DEC)
f.lease       = ProtoField.uint32("netlock.lease", "Lease (us)", base.DEC)
f.client_ip   = ProtoField.ipv4("netlock.client_ip", "Client IP")
f.client_port = ProtoField.uint16("netlock.client_port", "Client port", base.DEC)
f.slots       = ProtoField.uint16("netlock.slots", "Slots", base.DEC)
f.rack_key    = ProtoField.uint64("netlock.rack_key", "Rack key", base.HEX)
f.stat        = ProtoField.bytes("netlock.stat", "Lock statistics")
f.stat_lock   = ProtoField.uint32("netlock.stat.lock", "Lock", base.DEC)
f.stat_req    = ProtoField.uint32("netlock.stat.requests", "Requests", base.DEC)
f.stat_ovf    = ProtoField.uint32("netlock.stat.overflows", "Overflows", base.DEC)
f.stat_depth  = ProtoField.uint16("netlock.stat.depth", "Depth", base.DEC)
f.stat_decl   = ProtoField.uint16("netlock.stat.declared", "Declared contention", base.DEC)
f.resident    = ProtoField.uint32("netlock.resident", "Switch-resident lock", base.DEC)
f.trailer     = ProtoField.bytes("netlock.trailer", "Trailer (reserved)")

local e = netlock.experts
e.short   = ProtoExpert.new("netlock.short", "Packet shorter than the 48-byte header",
                            expert.group.MALFORMED, expert.severity.ERROR)
e.version = ProtoExpert.new("netlock.bad_version", "Unsupported version",
                            expert.group.MALFORMED, expert.severity.ERROR)
e.op      = ProtoExpert.new("netlock.bad_op", "Unknown op",
                            expert.group.MALFORMED, expert.severity.ERROR)
e.mode    = ProtoExpert.new("netlock.bad_mode", "Unknown mode",
                            expert.group.MALFORMED, expert.severity.ERROR)

local function flags_string(v)
    local names = {}
    for _, fb in ipairs(flag_bits) do
        if bit.band(v, fb[1]) ~= 0 then
            names[#names + 1] = fb[2]
        end
    end
    local rest = bit.band(v, 0xc0)
    if rest ~= 0 then
        names[#names + 1] = string.format("0x%02x", rest)
    end
    return table.concat(names, "|")
end

function netlock.dissector(tvb, pinfo, tree)
    local len = tvb:len()
    if len == 0 then
        return 0
    end
    pinfo.cols.protocol = "NetLock"
    local t = tree:add(netlock, tvb(0, math.min(len, HEADER_LEN)))

    if len < HEADER_LEN then
        t:add_proto_expert_info(e.short, string.format("Packet shorter than header: %d of %d bytes",
                                                       len, HEADER_LEN))
        pinfo.cols.info = string.format("Malformed (short: %d bytes)", len)
        return len
    end

    local version = tvb(0, 1):uint()
    local op = tvb(1, 1):uint()
    local mode = tvb(2, 1):uint()
    local flags = tvb(3, 1):uint()
    local status = tvb(4, 1):uint()

    local vi = t:add(f.version, tvb(0, 1))
    if version ~= VERSION then
        vi:add_proto_expert_info(e.version)
    end
    local oi = t:add(f.op, tvb(1, 1))
    if op_names[op] == nil then
        oi:add_proto_expert_info(e.op)
    end
    local mi = t:add(f.mode, tvb(2, 1))
    if mode_names[mode] == nil then
        mi:add_proto_expert_info(e.mode)
    end

    local fi = t:add(f.flags, tvb(3, 1))
    local fs = flags_string(flags)
    if fs ~= "" then
        fi:append_text(" (" .. fs .. ")")
    end
    fi:add(f.flag_reply, tvb(3, 1))
    fi:add(f.flag_retry, tvb(3, 1))
    fi:add(f.flag_try, tvb(3, 1))
    fi:add(f.flag_fwd, tvb(3, 1))
    fi:add(f.flag_renew, tvb(3, 1))
    fi:add(f.flag_batch, tvb(3, 1))
    fi:add(f.flag_rsvd, tvb(3, 1))

    if op == OP_ADMIN then
        t:add(f.admin, tvb(4, 1))
    else
        t:add(f.status, tvb(4, 1))
    end
    t:add(f.priority, tvb(5, 1))
    t:add(f.tenant, tvb(6, 2))
    t:add(f.lock, tvb(8, 4))
    t:add(f.txn, tvb(12, 8))
    t:add(f.token, tvb(20, 8))
    t:add(f.timestamp, tvb(28, 8))
    t:add(f.lease, tvb(36, 4))
    t:add(f.client_ip, tvb(40, 4))
    t:add(f.client_port, tvb(44, 2))
    t:add(f.slots, tvb(46, 2))
    if len > HEADER_LEN then
        local off = HEADER_LEN
        if control_ops[op] and len >= HEADER_LEN + KEY_LEN then
            t:add(f.rack_key, tvb(off, KEY_LEN))
            off = off + KEY_LEN
            local slots = tvb(46, 2):uint()
            if op == OP_ADMIN and bit.band(flags, FLAG_REPLY) ~= 0 and status == ADMIN_STATS then
                local n = 0
                while n < slots and off + STAT_LEN <= len do
                    local st = t:add(f.stat, tvb(off, STAT_LEN))
                    st:add(f.stat_lock, tvb(off, 4))
                    st:add(f.stat_req, tvb(off + 4, 4))
                    st:add(f.stat_ovf, tvb(off + 8, 4))
                    st:add(f.stat_depth, tvb(off + 12, 2))
                    st:add(f.stat_decl, tvb(off + 14, 2))
                    off, n = off + STAT_LEN, n + 1
                end
            elseif op == OP_ADMIN and bit.band(flags, FLAG_REPLY) ~= 0 and status == ADMIN_RESIDENTS then
                local n = 0
                while n < slots and off + 4 <= len do
                    t:add(f.resident, tvb(off, 4))
                    off, n = off + 4, n + 1
                end
            end
        end
        if off < len then
            t:add(f.trailer, tvb(off))
        end
    end

    -- Info column: exactly wire.Fields.String for a well-formed header (wire/tshark_test.go
    -- compares them), "Malformed (...)" for what wire.Parse rejects.
    local info
    if version ~= VERSION then
        info = string.format("Malformed (version %d)", version)
    elseif op_names[op] == nil then
        info = string.format("Malformed (unknown op %d)", op)
    elseif mode_names[mode] == nil then
        info = string.format("Malformed (unknown mode %d)", mode)
    else
        info = string.format("%s lock=%d txn=%s mode=%s", op_names[op], tvb(8, 4):uint(),
                             tostring(tvb(12, 8):uint64()), mode_short[mode])
        if flags ~= 0 then
            info = info .. " flags=" .. fs
        end
        if status ~= 0 then
            if op == OP_ADMIN then
                info = info .. " admin=" .. status
            else
                info = info .. " status=" .. (status_names[status] or string.format("status(%d)", status))
            end
        end
        local prio = tvb(5, 1):uint()
        if prio ~= 0 then
            info = info .. " prio=" .. prio
        end
        local tenant = tvb(6, 2):uint()
        if tenant ~= 0 then
            info = info .. " tenant=" .. tenant
        end
        local token = tvb(20, 8):uint64()
        if token ~= UInt64(0) then
            info = info .. " token=" .. tostring(token)
        end
        local lease = tvb(36, 4):uint()
        if lease ~= 0 then
            info = info .. " lease=" .. lease .. "us"
        end
        local cport = tvb(44, 2):uint()
        if bit.band(flags, FLAG_FWD) ~= 0 or cport ~= 0 or tvb(40, 4):uint() ~= 0 then
            info = info .. " client=" .. tostring(tvb(40, 4):ipv4()) .. ":" .. cport
        end
        local slots = tvb(46, 2):uint()
        if slots ~= 0 then
            info = info .. " slots=" .. slots
        end
    end
    t:append_text(", " .. info)
    pinfo.cols.info = info
    return len
end

DissectorTable.get("udp.port"):add(PORT, netlock)
