/// The elements of a GGUF array value, as a collection of `GGUFValue`s.
///
/// Arrays read from a file keep strings as one buffer of UTF-8 bytes with end offsets, and 32-bit numbers as
/// plain arrays; elements become `GGUFValue`s when read. A vocabulary's token, merge and type arrays (about 150 000
/// elements for SmolLM2) then take about 1 MiB for the life of the file instead of 3.4 MiB as enum values.
public struct GGUFArray: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral {
    enum Storage: Equatable, Sendable {
        case values([GGUFValue])
        /// String i is `bytes[ends[i - 1] ..< ends[i]]` (from 0 for the first).
        case strings(bytes: [UInt8], ends: [Int])
        case int32s([Int32])
        case float32s([Float])
    }

    let storage: Storage

    init(storage: Storage) {
        self.storage = storage
    }

    public init(_ values: [GGUFValue]) {
        storage = .values(values)
    }

    public init(arrayLiteral elements: GGUFValue...) {
        storage = .values(elements)
    }

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .values(let v): return v.count
        case .strings(_, let ends): return ends.count
        case .int32s(let v): return v.count
        case .float32s(let v): return v.count
        }
    }

    public subscript(position: Int) -> GGUFValue {
        switch storage {
        case .values(let v): return v[position]
        case .strings(let bytes, let ends):
            let start = position == 0 ? 0 : ends[position - 1]
            // Invalid UTF-8 is repaired (U+FFFD), as for every GGUF string.
            return .string(
                bytes[start..<ends[position]].withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) })
        case .int32s(let v): return .int32(v[position])
        case .float32s(let v): return .float32(v[position])
        }
    }

    /// Element-wise equality, whatever the storage.
    public static func == (a: GGUFArray, b: GGUFArray) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0 == $1 }
    }
}
