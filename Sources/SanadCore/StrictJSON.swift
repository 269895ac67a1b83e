/// A strict JSON reader for files people write (host configs, plugin data): RFC 8259 and nothing more. Unlike
/// `JSONDecoder` it refuses trailing commas and duplicate keys, checks the UTF-8 itself, and limits the size and
/// the nesting; every error gives the line and column (1-based, in characters) where the problem is.
public struct StrictJSON: Sendable {
    /// Files larger than this are refused before parsing.
    public var maximumBytes: Int
    /// Arrays and objects nested deeper than this are refused.
    public var maximumDepth: Int

    public static let defaultMaximumBytes = 4 << 20
    public static let defaultMaximumDepth = 64

    /// The reader behind `JSONValue.parse`: JSON documents of any origin (tool arguments, replies of a remote
    /// engine, plugin data), up to 64 MiB and `defaultMaximumDepth` levels.
    public static let documents = StrictJSON(maximumBytes: 64 << 20)

    public init(maximumBytes: Int = StrictJSON.defaultMaximumBytes, maximumDepth: Int = StrictJSON.defaultMaximumDepth)
    {
        self.maximumBytes = maximumBytes
        self.maximumDepth = maximumDepth
    }

    /// Parses one JSON document; throws `SanadError.invalidJSON` with the line, column and problem.
    public func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        guard bytes.count <= maximumBytes else {
            throw SanadError.invalidJSON(
                line: 1, column: 1,
                problem: "the file is \(bytes.count) bytes; at most \(maximumBytes) are read (is it the right file?)")
        }
        var parser = StrictJSONParser(bytes: Array(bytes), maximumDepth: maximumDepth)
        try parser.validateUTF8()
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else {
            throw parser.fail("unexpected \(parser.describeCurrent()) after the document's end")
        }
        return value
    }
}

/// The parser's cursor over the bytes.
struct StrictJSONParser {
    let bytes: [UInt8]
    let maximumDepth: Int
    var index = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Line and column of byte `at`: columns count characters (UTF-8 lead bytes), not bytes.
    func position(_ at: Int) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var i = 0
        while i < at && i < bytes.count {
            if bytes[i] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[i] & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return (line, column)
    }

    func fail(_ problem: String, at: Int? = nil) -> SanadError {
        let p = position(at ?? index)
        return .invalidJSON(line: p.line, column: p.column, problem: problem)
    }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "end of file" }
        let b = bytes[index]
        if b >= 0x21 && b < 0x7F { return "'\(Character(UnicodeScalar(b)))'" }
        return "byte 0x\(String(b, radix: 16, uppercase: true))"
    }

    /// Every byte sequence must be well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
    func validateUTF8() throws {
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch b {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default:
                throw fail(
                    "invalid UTF-8 (byte 0x\(String(b, radix: 16, uppercase: true))); save the file as UTF-8", at: i)
            }
            for k in 1..<length {
                guard i + k < bytes.count else { throw fail("invalid UTF-8: the file ends inside a character", at: i) }
                let c = bytes[i + k]
                let (lo, hi) = k == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
                guard c >= lo && c <= hi else {
                    throw fail("invalid UTF-8 (a malformed multi-byte character); save the file as UTF-8", at: i)
                }
            }
            i += length
        }
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of file; expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected \(describeCurrent()); expected a value")
        }
    }

    mutating func literal(_ word: String, _ value: JSONValue) throws -> JSONValue {
        let w = Array(word.utf8)
        guard index + w.count <= bytes.count, Array(bytes[index..<index + w.count]) == w else {
            throw fail("unexpected \(describeCurrent()); expected a value (true, false, null, a number, a string, …)")
        }
        index += w.count
        return value
    }

    mutating func object(depth: Int) throws -> JSONValue {
        guard depth <= maximumDepth else { throw fail("nested deeper than \(maximumDepth) levels") }
        index += 1
        var result: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(result)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
                    throw fail("trailing comma before '}'; remove the last ','")
                }
                throw fail("unexpected \(describeCurrent()); expected a key in double quotes")
            }
            let keyStart = index
            let key = try string()
            guard result[key] == nil else {
                throw fail("duplicate key '\(key)' in this object; keep one", at: keyStart)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw fail("unexpected \(describeCurrent()); expected ':' after the key '\(key)'")
            }
            index += 1
            skipWhitespace()
            result[key] = try value(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of file; expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(result)
            }
            throw fail("unexpected \(describeCurrent()); expected ',' or '}'")
        }
    }

    mutating func array(depth: Int) throws -> JSONValue {
        guard depth <= maximumDepth else { throw fail("nested deeper than \(maximumDepth) levels") }
        index += 1
        var result: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(result)
        }
        while true {
            skipWhitespace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
                throw fail("trailing comma before ']'; remove the last ','")
            }
            result.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of file; expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(result)
            }
            throw fail("unexpected \(describeCurrent()); expected ',' or ']'")
        }
    }

    mutating func hexDigit() throws -> UInt32 {
        guard index < bytes.count else { throw fail("unexpected end of file in a \\u escape") }
        let b = bytes[index]
        index += 1
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
        default: throw fail("a \\u escape needs four hex digits", at: index - 1)
        }
    }

    mutating func unicodeEscape() throws -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 { v = v << 4 | (try hexDigit()) }
        return v
    }

    mutating func string() throws -> String {
        let start = index
        index += 1
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else { throw fail("unterminated string (no closing '\"')", at: start) }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { throw fail("a control character (0x\(String(b, radix: 16))) in a string; escape it") }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { throw fail("unterminated escape") }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                let escapeStart = index - 2
                var scalar = try unicodeEscape()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw fail("a lone high surrogate \\u escape; pair it with a low one", at: escapeStart) }
                    index += 2
                    let low = try unicodeEscape()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw fail("a high surrogate \\u escape not followed by a low one", at: escapeStart)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("a lone low surrogate \\u escape", at: escapeStart)
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("an invalid \\u escape", at: escapeStart) }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw fail("unknown escape '\\\(Character(UnicodeScalar(e)))'", at: index - 2)
            }
        }
    }

    mutating func number() throws -> Double {
        let start = index
        func digits() -> Int {
            let s = index
            while index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return index - s
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw fail("a number needs digits", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
                throw fail("a number may not have leading zeros", at: start)
            }
        } else if digits() == 0 {
            throw fail("a number needs digits", at: start)
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw fail("a number needs digits after '.'", at: start) }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard digits() > 0 else { throw fail("a number needs digits in its exponent", at: start) }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let v = Double(text), v.isFinite else {
            throw fail("the number \(text) is out of range", at: start)
        }
        return v
    }
}
