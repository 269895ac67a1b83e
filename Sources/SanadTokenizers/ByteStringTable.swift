/// A hash table from byte strings to `Int32`, looked up by pointer and length so that the tokenizers can ask
/// "is this slice of the text a token?" without allocating.
///
/// Keys are raw bytes, never `String`: Swift compares strings by canonical equivalence, so "é" (U+00E9) and "e" +
/// U+0301 are equal `String`s but distinct tokens. llama.cpp compares bytes; so do we.
struct ByteStringTable: Sendable {
    /// All keys, back to back.
    private var storage: [UInt8] = []
    private var keyStart: [Int32] = []
    private var keyLength: [Int32] = []
    private var keyHash: [UInt32] = []
    /// The value of each entry.
    private(set) var values: [Int32] = []
    /// Open addressing: an entry index, or -1 for an empty slot.
    private var slots: [Int32]
    private var mask: Int

    init(expectedCount: Int) {
        var capacity = 16
        while capacity < expectedCount * 2 { capacity <<= 1 }
        slots = [Int32](repeating: -1, count: capacity)
        mask = capacity - 1
        keyStart.reserveCapacity(expectedCount)
        keyLength.reserveCapacity(expectedCount)
        keyHash.reserveCapacity(expectedCount)
        values.reserveCapacity(expectedCount)
        storage.reserveCapacity(expectedCount * 8)
    }

    var count: Int { values.count }

    /// FNV-1a over the bytes.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for b in bytes { h = (h ^ UInt32(b)) &* 16_777_619 }
        return h
    }

    /// The value stored for `bytes`, or nil.
    @inline(__always)
    func value(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        let entry = find(bytes, hash: Self.hash(bytes))
        return entry < 0 ? nil : values[entry]
    }

    func value(_ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBufferPointer { value($0) }
    }

    /// The entry index holding `bytes`, or -1.
    private func find(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt32) -> Int {
        var slot = Int(hash) & mask
        return storage.withUnsafeBufferPointer { keys in
            while true {
                let entry = Int(slots[slot])
                if entry < 0 { return -1 }
                if keyHash[entry] == hash && Int(keyLength[entry]) == bytes.count {
                    let start = Int(keyStart[entry])
                    var same = true
                    var i = 0
                    while i < bytes.count {
                        if keys[start + i] != bytes[i] {
                            same = false
                            break
                        }
                        i += 1
                    }
                    if same { return entry }
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Inserts `bytes` with `value` unless the key is present; returns the value now stored for the key and whether
    /// it was inserted.
    @discardableResult
    mutating func insertIfAbsent(_ bytes: UnsafeBufferPointer<UInt8>, value: Int32) -> (value: Int32, inserted: Bool) {
        let h = Self.hash(bytes)
        let existing = find(bytes, hash: h)
        if existing >= 0 { return (values[existing], false) }
        if (values.count + 1) * 2 > slots.count { grow() }
        let entry = Int32(values.count)
        keyStart.append(Int32(storage.count))
        keyLength.append(Int32(bytes.count))
        keyHash.append(h)
        storage.append(contentsOf: bytes)
        values.append(value)
        var slot = Int(h) & mask
        while slots[slot] >= 0 { slot = (slot + 1) & mask }
        slots[slot] = entry
        return (value, true)
    }

    @discardableResult
    mutating func insertIfAbsent(_ bytes: [UInt8], value: Int32) -> (value: Int32, inserted: Bool) {
        bytes.withUnsafeBufferPointer { insertIfAbsent($0, value: value) }
    }

    private mutating func grow() {
        let capacity = slots.count * 2
        slots = [Int32](repeating: -1, count: capacity)
        mask = capacity - 1
        for entry in 0..<values.count {
            var slot = Int(keyHash[entry]) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(entry)
        }
    }
}

/// The UTF-8 bytes of `string`, without a copy when the string is native.
@inline(__always)
func withTokenizerBytes<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
    if let r = try string.utf8.withContiguousStorageIfAvailable(body) { return r }
    return try Array(string.utf8).withUnsafeBufferPointer(body)
}
