-- SPDX-License-Identifier: BSD-3-Clause
-- crc32c.lua - CRC32C (Castagnoli), the check that PME_AUTH=crc puts on every frame.
--
-- Loaded by ../pme.lua. Returns a constructor and does nothing else when loaded, so
-- that Wireshark loading it on its own (it loads every .lua file under its plugin
-- directories) is harmless.
--
-- Table-driven, a byte at a time. Wireshark 4.0 runs Lua 5.2 (bit32); later versions
-- may run Lua 5.4 without bit32 but keep Wireshark's own "bit" library, whose results
-- are signed: the result is brought back to 0..2^32-1 at the end.
return function()
    local bitlib = bit32 or bit
    local band, bxor, rshift = bitlib.band, bitlib.bxor, bitlib.rshift
    local POLY_REFLECTED = 0x82F63B78
    local TWO32 = 4294967296

    local T = {}
    for i = 0, 255 do
        local c = i
        for _ = 1, 8 do
            if band(c, 1) ~= 0 then
                c = bxor(rshift(c, 1), POLY_REFLECTED)
            else
                c = rshift(c, 1)
            end
        end
        T[i] = c
    end

    local byte, min = string.byte, math.min
    local CHUNK = 256 -- string.byte returns at most this many values at a time

    -- Continue a CRC over the bytes of the Lua string s. Start with 0; the result needs
    -- no final step (as pme_crc32c in src/pme_core/crc32c.h).
    local function update(crc, s)
        crc = bxor(crc, 0xFFFFFFFF)
        local n, i = #s, 1
        while i <= n do
            local j = min(i + CHUNK - 1, n)
            local bytes = { byte(s, i, j) }
            for k = 1, #bytes do
                crc = bxor(T[band(bxor(crc, bytes[k]), 0xFF)], rshift(crc, 8))
            end
            i = j + 1
        end
        return bxor(crc, 0xFFFFFFFF) % TWO32
    end

    return { update = update }
end
