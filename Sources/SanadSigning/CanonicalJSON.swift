import SanadCore

/// RFC 8785 JSON Canonicalization Scheme (JCS): object keys sorted by their UTF-16 code units, numbers as
/// ECMAScript's `Number.prototype.toString` writes them, strings with the minimal escapes, no whitespace. The
/// signed bytes of a credit record and of a generation receipt are their canonical form.
public enum CanonicalJSON {
    /// The canonical UTF-8 bytes of `value`; a non-finite number is an error (JSON has none).
    public static func bytes(_ value: JSONValue) throws -> [UInt8] {
        var out: [UInt8] = []
        try write(value, into: &out)
        return out
    }

    public static func string(_ value: JSONValue) throws -> String {
        String(decoding: try bytes(value), as: UTF8.self)
    }

    static func write(_ value: JSONValue, into out: inout [UInt8]) throws {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let n): out += Array(try number(n).utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                try write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            let keys = object.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
            for (i, key) in keys.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                try write(object[key] ?? .null, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `s` as a canonical JSON string (quotes included) appended to `out`.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// ECMAScript number-to-string (ECMA-262 Number::toString) from the shortest round-trip digits, which Swift's
    /// `description` also produces.
    public static func number(_ value: Double) throws -> String {
        guard value.isFinite else { throw SigningError.value("a number in a signed document is not finite (\(value))") }
        if value == 0 { return "0" }
        // An integer below 2^53 is its digits (token ids, counts): the general path below gives the same text.
        if abs(value) < 9_007_199_254_740_992, value == value.rounded(.towardZero) { return String(Int64(value)) }
        if value < 0 { return "-" + (try number(-value)) }
        // Swift writes the shortest digits as `d.ddde±x`, `ddd.ddd` or `0.000ddd`; take the digits and exponent.
        let text = "\(value)"
        var mantissa = text
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = String(text[..<e])
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let intPart = String(parts[0])
        let fracPart = parts.count > 1 ? String(parts[1]) : ""
        var digits = intPart + fracPart
        var pointPosition = intPart.count + exponent  // the decimal point is after this many digits
        while digits.first == "0", digits.count > 1 {
            digits.removeFirst()
            pointPosition -= 1
        }
        while digits.last == "0", digits.count > 1 { digits.removeLast() }
        let k = digits.count
        let n = pointPosition
        if k <= n && n <= 21 { return digits + String(repeating: "0", count: n - k) }
        if 0 < n && n <= 21 {
            return String(digits.prefix(n)) + "." + String(digits.dropFirst(n))
        }
        if -6 < n && n <= 0 { return "0." + String(repeating: "0", count: -n) + digits }
        let e = n - 1
        let sign = e < 0 ? "-" : "+"
        let head = k == 1 ? digits : String(digits.prefix(1)) + "." + String(digits.dropFirst())
        return head + "e" + sign + String(abs(e))
    }
}
