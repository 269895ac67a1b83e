import Foundation
import GGUF
import PureSwiftKernels
import SanadCore

/// The key/value cache of one session: for every layer, `capacity` rows of keys and of values, each row all KV
/// heads of one position (`kvDimensions` values). Stored as llama.cpp stores its cache: half precision by default
/// (F16, half the memory of floats and results identical to llama.cpp's default), or Q8_0 per side
/// (`-ctk/-ctv q8_0`: about half again), each row as the type's blocks.
public final class KVCache {
    public let layers: Int
    public let capacity: Int
    public let kvDimensions: Int
    /// How keys and values are stored: `.f16` or `.q8_0` (`kvCacheTypes`).
    public let keyType: GGMLType
    public let valueType: GGMLType
    /// Bytes from one position's row to the next.
    public let keyRowBytes: Int
    public let valueRowBytes: Int
    /// Positions filled so far (the next token goes to row `count`).
    public var count = 0
    private let storage: UnsafeMutableRawPointer

    /// Throws `SanadError.engine` when the memory cannot be had or a type is not one the engine stores.
    public init(
        layers: Int, capacity: Int, kvDimensions: Int, keyType: GGMLType = .f16, valueType: GGMLType = .f16
    ) throws {
        for (type, side) in [(keyType, "k"), (valueType, "v")] where !kvCacheTypes.contains(type) {
            throw SanadError.engine(
                "pure-swift: cache type \(type.cacheTypeName) for the \(side == "k" ? "keys" : "values") (--cache-type-\(side)) is "
                    + "not one this engine stores (\(kvCacheTypes.map(\.cacheTypeName).joined(separator: ", "))); "
                    + "the llama engine (--backend llama) takes llama.cpp's other cache types")
        }
        if keyType == .q8_0 || valueType == .q8_0, kvDimensions % 32 != 0 {
            throw SanadError.engine(
                "pure-swift: a q8_0 cache needs rows of a multiple of 32 values; this model's are \(kvDimensions)")
        }
        self.layers = layers
        self.capacity = capacity
        self.kvDimensions = kvDimensions
        self.keyType = keyType
        self.valueType = valueType
        keyRowBytes = kvCacheRowBytes(keyType, count: kvDimensions)
        valueRowBytes = kvCacheRowBytes(valueType, count: kvDimensions)
        storage = UnsafeMutableRawPointer(
            try allocateZeroed(
                UInt8.self, count: layers * capacity * (keyRowBytes + valueRowBytes),
                for: "the KV cache of \(capacity) positions"))
    }

    deinit { free(storage) }

    /// Bytes the cache takes.
    public var byteCount: Int { layers * capacity * (keyRowBytes + valueRowBytes) }

    /// Whether both sides are F16 (llama.cpp's tiled path for large batches applies only then).
    public var isHalf: Bool { keyType == .f16 && valueType == .f16 }

    /// Row `position` of layer `layer`'s keys.
    @inline(__always)
    public func keys(layer: Int, position: Int) -> UnsafeMutableRawPointer {
        storage + layer * capacity * (keyRowBytes + valueRowBytes) + position * keyRowBytes
    }

    /// Row `position` of layer `layer`'s values.
    @inline(__always)
    public func values(layer: Int, position: Int) -> UnsafeMutableRawPointer {
        storage + (layer * capacity * (keyRowBytes + valueRowBytes) + capacity * keyRowBytes) + position * valueRowBytes
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
    /// Stores the keys and values of `count` consecutive positions from `position` in layer `layer`, as the
    /// cache's types (`storeCacheRow`): `keys` and `values` are (count, kvDimensions).
    func store(
        keys: UnsafePointer<Float>, values: UnsafePointer<Float>, layer: Int, position: Int, count: Int
    ) {
        for b in 0..<count {
            storeCacheRow(
                keys + b * kvDimensions, as: keyType, into: self.keys(layer: layer, position: position + b),
                count: kvDimensions)
            storeCacheRow(
                values + b * kvDimensions, as: valueType, into: self.values(layer: layer, position: position + b),
                count: kvDimensions)
        }
    }
}
