/// Writes Redis commands in RESP, the protocol's request form: `*<arguments>\r\n`, then `$<length>\r\n<bytes>\r\n`
/// for each argument. It is what hiredis's `redisFormatCommandArgv` writes, without its per-argument `sprintf`,
/// the argv arrays it needs and the copy out of its buffer: the acknowledger sends a command field per message.
enum RESPEncoder {
    /// Appends `arguments` as one command to `wire`.
    static func append(_ arguments: [[UInt8]], to wire: inout [UInt8]) {
        wire.reserveCapacity(wire.count + arguments.reduce(16) { $0 + $1.count + 16 })
        wire.append(UInt8(ascii: "*"))
        appendDecimal(arguments.count, to: &wire)
        wire.append(contentsOf: [0x0D, 0x0A])
        for argument in arguments {
            wire.append(UInt8(ascii: "$"))
            appendDecimal(argument.count, to: &wire)
            wire.append(contentsOf: [0x0D, 0x0A])
            wire.append(contentsOf: argument)
            wire.append(contentsOf: [0x0D, 0x0A])
        }
    }

    /// A count in decimal ASCII (counts are never negative).
    private static func appendDecimal(_ value: Int, to wire: inout [UInt8]) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var remaining = UInt(max(0, value))
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            } while remaining > 0
            wire.append(contentsOf: buffer[(20 - count)...])
        }
    }
}
