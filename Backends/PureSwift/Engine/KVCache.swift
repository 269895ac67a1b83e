import Foundation
import PureSwiftKernels
import SanadCore

/// The key/value cache of one session: for every layer, `capacity` rows of keys and of values, each row
/// `kvDimensions` halves (all KV heads of one position). Stored in half precision, as llama.cpp's default F16 cache,
/// which halves the memory and keeps results identical to it.
public final class KVCache {
    public let layers: Int
    public let capacity: Int
    public let kvDimensions: Int
    /// Positions filled so far (the next token goes to row `count`).
    public var count = 0
    private let storage: UnsafeMutablePointer<UInt16>

    /// Throws `SanadError.engine` when the memory cannot be had.
    public init(layers: Int, capacity: Int, kvDimensions: Int) throws {
        self.layers = layers
        self.capacity = capacity
        self.kvDimensions = kvDimensions
        storage = try allocateZeroed(
            UInt16.self, count: layers * capacity * kvDimensions * 2, for: "the KV cache of \(capacity) positions")
    }

    deinit { free(storage) }

    /// Bytes the cache takes.
    public var byteCount: Int { layers * capacity * kvDimensions * 2 * 2 }

    /// Row `position` of layer `layer`'s keys.
    @inline(__always)
    public func keys(layer: Int, position: Int) -> UnsafeMutablePointer<UInt16> {
        storage + ((layer * 2) * capacity + position) * kvDimensions
    }

    /// Row `position` of layer `layer`'s values.
    @inline(__always)
    public func values(layer: Int, position: Int) -> UnsafeMutablePointer<UInt16> {
        storage + ((layer * 2 + 1) * capacity + position) * kvDimensions
    }
}

/// `count` zeroed values from `calloc`, released with `free`. Large blocks come straight from the OS as untouched
/// zero pages, so a cache or buffer sized for the whole context costs memory (and load time) only as positions
/// fill it. Throws `SanadError.engine` naming `what` when the memory cannot be had.
func allocateZeroed<T>(_ type: T.Type, count: Int, for what: String) throws -> UnsafeMutablePointer<T> {
    guard let raw = calloc(max(1, count), MemoryLayout<T>.stride) else {
        throw SanadError.engine(
            "pure-swift: out of memory allocating \(count * MemoryLayout<T>.stride) bytes for \(what); "
                + "pass a smaller context (-c) or batch size")
    }
    return raw.assumingMemoryBound(to: T.self)
}

extension KVCache {
    /// Stores the keys and values of `count` consecutive positions from `position` in layer `layer`, rounded to
    /// half: `keys` and `values` are (count, kvDimensions).
    func store(
        keys: UnsafePointer<Float>, values: UnsafePointer<Float>, layer: Int, position: Int, count: Int
    ) {
        for b in 0..<count {
            storeHalves(
                keys + b * kvDimensions, into: self.keys(layer: layer, position: position + b), count: kvDimensions)
            storeHalves(
                values + b * kvDimensions, into: self.values(layer: layer, position: position + b), count: kvDimensions)
        }
    }
}
