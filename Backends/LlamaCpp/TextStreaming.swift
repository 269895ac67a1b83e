/// Turns a stream of token byte pieces into text that never splits a character: bytes of an unfinished UTF-8
/// sequence are held until the piece that completes it arrives.
public struct UTF8StreamDecoder: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// True while bytes of an unfinished character are held.
    public var hasPendingBytes: Bool { !pending.isEmpty }

    /// Appends `bytes` and returns the text that is now complete (possibly empty). Invalid bytes become U+FFFD.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        pending.append(contentsOf: bytes)
        let cut = completeLength(pending)
        guard cut > 0 else { return "" }
        let text = String(decoding: pending[..<cut], as: UTF8.self)
        pending.removeFirst(cut)
        return text
    }

    /// Whatever is held, with an unfinished character replaced by U+FFFD; the decoder is empty afterwards.
    public mutating func flush() -> String {
        defer { pending.removeAll() }
        return pending.isEmpty ? "" : String(decoding: pending, as: UTF8.self)
    }

    /// The length of the longest prefix of `bytes` that does not end inside an unfinished UTF-8 sequence.
    private func completeLength(_ bytes: [UInt8]) -> Int {
        let n = bytes.count
        // Walk back over at most 3 continuation bytes (10xxxxxx) to the last lead byte.
        var i = n - 1
        var continuation = 0
        while i >= 0 && continuation < 3 && bytes[i] & 0xC0 == 0x80 {
            i -= 1
            continuation += 1
        }
        guard i >= 0 else { return n }
        let lead = bytes[i]
        let needed: Int
        if lead & 0x80 == 0 {
            needed = 1
        } else if lead & 0xE0 == 0xC0 {
            needed = 2
        } else if lead & 0xF0 == 0xE0 {
            needed = 3
        } else if lead & 0xF8 == 0xF0 {
            needed = 4
        } else {
            return n  // not a lead byte: invalid, emit (as U+FFFD)
        }
        return n - i < needed ? i : n
    }
}

/// Holds back text that could be the start of a stop string, and finds the first complete stop string.
struct StopStringMatcher {
    let stops: [String]
    private(set) var held = ""

    init(_ stops: [String]) { self.stops = stops.filter { !$0.isEmpty } }

    /// Feeds new text; returns the text safe to emit and whether a stop string completed (the text before it is
    /// returned, the stop string and anything after it are dropped).
    mutating func feed(_ text: String) -> (emit: String, stopped: Bool) {
        guard !stops.isEmpty else { return (text, false) }
        held += text
        var first: Range<String.Index>?
        for stop in stops {
            if let r = held.range(of: stop), first.map({ r.lowerBound < $0.lowerBound }) ?? true { first = r }
        }
        if let first {
            let emit = String(held[..<first.lowerBound])
            held = ""
            return (emit, true)
        }
        // Keep the longest suffix that is a proper prefix of some stop string.
        var keep = 0
        for stop in stops {
            var k = min(stop.count - 1, held.count)
            while k > keep {
                if held.hasSuffix(stop.prefix(k)) {
                    keep = k
                    break
                }
                k -= 1
            }
        }
        let cut = held.index(held.endIndex, offsetBy: -keep)
        let emit = String(held[..<cut])
        held = String(held[cut...])
        return (emit, false)
    }

    /// The held text (when generation ends for another reason).
    mutating func flush() -> String {
        defer { held = "" }
        return held
    }
}
