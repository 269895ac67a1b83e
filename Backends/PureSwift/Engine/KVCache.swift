import PureSwiftKernels

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

    public init(layers: Int, capacity: Int, kvDimensions: Int) {
        self.layers = layers
        self.capacity = capacity
        self.kvDimensions = kvDimensions
        let n = layers * capacity * kvDimensions * 2
        storage = .allocate(capacity: n)
        storage.initialize(repeating: 0, count: n)
    }

    deinit { storage.deallocate() }

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
