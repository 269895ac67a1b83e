/// Turns the bytes of generated tokens into text as they arrive, never splitting a character: a token may end in the
/// middle of a UTF-8 sequence (byte-level BPE pieces and SentencePiece `<0xNN>` byte tokens often do, for Arabic
/// letters and emoji), so the bytes of an unfinished code point are held back until the bytes that complete it
/// arrive. Every chunk returned is whole code points; bytes that can never become valid are released at once (as
/// U+FFFD). At the end of a stream `flush()` writes an unfinished sequence as U+FFFD and `dropPending()` drops it.
public struct UTF8StreamDecoder: Sendable {
    /// Bytes of a code point that is not complete yet (at most 3).
    private var pending: [UInt8] = []

    public init() {}

    /// True while bytes of an unfinished character are held.
    public var hasPendingBytes: Bool { !pending.isEmpty }

    /// Adds raw bytes and returns the text that is now complete (possibly empty).
    public mutating func append(_ bytes: some Sequence<UInt8>) -> String {
        pending.append(contentsOf: bytes)
        let cut = Self.completePrefixLength(pending)
        guard cut > 0 else { return "" }
        let text = String(decoding: pending[..<cut], as: UTF8.self)
        pending.removeFirst(cut)
        return text
    }

    /// Returns what is held back (an unfinished sequence as U+FFFD) and resets.
    public mutating func flush() -> String {
        defer { pending.removeAll() }
        return pending.isEmpty ? "" : String(decoding: pending, as: UTF8.self)
    }

    /// Forgets the bytes of an unfinished character (the stream ended before the bytes that complete it); returns
    /// how many there were.
    @discardableResult
    public mutating func dropPending() -> Int {
        defer { pending.removeAll() }
        return pending.count
    }

    /// The length of the longest prefix that ends on a code point boundary, keeping back only a trailing sequence
    /// that could still be completed by more bytes; bytes that can never become valid are released (they decode as
    /// U+FFFD).
    static func completePrefixLength(_ bytes: [UInt8]) -> Int {
        let n = bytes.count
        // Look at the last up-to-3 bytes for the start of an unfinished sequence.
        var i = n - 1
        let lowest = max(0, n - 3)
        while i >= lowest {
            let b = bytes[i]
            if b & 0xC0 != 0x80 {  // not a continuation byte: a start (or ASCII/invalid)
                let need: Int
                switch b {
                case 0xC2...0xDF: need = 2
                case 0xE0...0xEF: need = 3
                case 0xF0...0xF4: need = 4
                default: return n  // ASCII or a byte that starts nothing: all is final
                }
                let have = n - i
                if have >= need { return n }
                // Held back only if what follows the lead byte so far can still be valid.
                return isViablePrefix(bytes[i...]) ? i : n
            }
            i -= 1
        }
        return n
    }

    /// Whether an incomplete sequence could still become a valid code point (second-byte ranges of UTF-8).
    private static func isViablePrefix(_ sequence: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(sequence)
        guard bytes.count >= 2 else { return true }
        let lead = bytes[0]
        let second = bytes[1]
        let range: ClosedRange<UInt8>
        switch lead {
        case 0xE0: range = 0xA0...0xBF
        case 0xED: range = 0x80...0x9F
        case 0xF0: range = 0x90...0xBF
        case 0xF4: range = 0x80...0x8F
        default: range = 0x80...0xBF
        }
        guard range.contains(second) else { return false }
        return bytes.dropFirst(2).allSatisfy { $0 & 0xC0 == 0x80 }
    }
}
