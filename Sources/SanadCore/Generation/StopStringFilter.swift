/// Holds back generated text that could be the beginning of a stop string, and finds stop strings across token
/// boundaries. Works on UTF-8 bytes: a stop string begins on a code point boundary, so every cut it makes is one.
public struct StopStringFilter: Sendable {
    private let stops: [[UInt8]]
    private var pending: [UInt8] = []

    public init(_ stopStrings: [String]) {
        stops = stopStrings.map { Array($0.utf8) }.filter { !$0.isEmpty }
    }

    /// Adds newly decoded text. Returns the text that is safe to show and whether a stop string was found (then the
    /// text is everything before it, and the rest is dropped).
    public mutating func append(_ text: String) -> (text: String, stopped: Bool) {
        guard !stops.isEmpty else { return (text, false) }
        pending.append(contentsOf: text.utf8)
        // The earliest complete stop string ends generation.
        var earliest: Int?
        for stop in stops {
            if let i = firstIndex(of: stop, in: pending), earliest.map({ i < $0 }) ?? true { earliest = i }
        }
        if let earliest {
            let out = String(decoding: pending[..<earliest], as: UTF8.self)
            pending.removeAll()
            return (out, true)
        }
        // Keep the longest tail that is a proper prefix of some stop string.
        var hold = 0
        for stop in stops {
            var k = min(stop.count - 1, pending.count)
            while k > hold {
                if pending[(pending.count - k)...].elementsEqual(stop[..<k]) {
                    hold = k
                    break
                }
                k -= 1
            }
        }
        let cut = pending.count - hold
        let out = String(decoding: pending[..<cut], as: UTF8.self)
        pending.removeFirst(cut)
        return (out, false)
    }

    /// Returns whatever is still held back (generation ended without the stop string completing).
    public mutating func flush() -> String {
        defer { pending.removeAll() }
        return String(decoding: pending, as: UTF8.self)
    }

    private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}
