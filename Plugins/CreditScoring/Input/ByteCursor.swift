/// Reads digits and punctuation off the front of one input line (UTF-8 bytes).
struct ByteCursor {
    let bytes: [UInt8]
    var index: Int

    init(_ bytes: [UInt8], at index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    var atEnd: Bool { index >= bytes.count }
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// Between `min` and `max` ASCII digits as a number, or nil (the cursor is then unchanged).
    mutating func number(min: Int, max: Int) -> Int? {
        var value = 0
        var count = 0
        while count < max, index + count < bytes.count, (48...57).contains(bytes[index + count]) {
            value = value * 10 + Int(bytes[index + count] - 48)
            count += 1
        }
        guard count >= min else { return nil }
        index += count
        return value
    }

    /// Takes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// Takes the bytes of `text` when they are next.
    mutating func take(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard index + utf8.count <= bytes.count, bytes[index..<(index + utf8.count)].elementsEqual(utf8) else {
            return false
        }
        index += utf8.count
        return true
    }

    mutating func skipSpaces() { while peek == 32 || peek == 9 { index += 1 } }

    /// The first index at or after the cursor where `pattern` starts, or nil.
    func find(_ pattern: [UInt8]) -> Int? {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return nil }
        var i = index
        while i + pattern.count <= bytes.count {
            if bytes[i] == pattern[0], bytes[i..<(i + pattern.count)].elementsEqual(pattern) { return i }
            i += 1
        }
        return nil
    }

    func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
}
