import SanadCore

/// The BLAS engine's options, from the host config's `backends[].options` (or `ModelLoadOptions.engineOptions`).
/// Unknown keys and wrong types are errors that name the key.
public struct BLASOptions: Sendable, Equatable {
    /// The keys the engine reads.
    public static let keys = ["library", "cache-weights", "minimum-batch", "kernels"]

    /// Batches shorter than this stay on the pure-Swift kernels by default. `sgemm` starts to win at about 32
    /// tokens when every matrix is dequantized per batch, at about 16 with cached weights (SmolLM2-135M Q4_1, 2
    /// threads; see README.md here); below 32 the gain is at most ~15 % of a batch that takes ~0.1 s, while the
    /// kernels give llama.cpp's results bit for bit (through `sgemm` a near-tie greedy pick can change). So 32.
    public static let defaultMinimumBatch = 32

    /// A CBLAS library path that takes precedence over `SANAD_BLAS` and the loader's search.
    public var library: String?
    /// Keep an F32 copy of every matrix for the session (memory: 4 bytes per weight) instead of dequantizing each
    /// matrix into one reusable buffer on every batch.
    public var cacheWeights: Bool
    /// The smallest batch whose products go to `cblas_sgemm`.
    public var minimumBatch: Int
    /// The pure-Swift engine's `kernels` option (a kernel build name), passed on unchanged (it checks the value).
    public var kernels: JSONValue?

    public init(
        library: String? = nil, cacheWeights: Bool = false, minimumBatch: Int = defaultMinimumBatch,
        kernels: JSONValue? = nil
    ) {
        self.library = library
        self.cacheWeights = cacheWeights
        self.minimumBatch = minimumBatch
        self.kernels = kernels
    }

    /// Reads `options`; throws `BLASError.invalidOption` naming the key for an unknown key or a wrong value.
    public init(parsing options: [String: JSONValue]) throws {
        self.init()
        let reader = try OptionReader(options, allowed: Self.keys) { key, problem in
            BLASError.invalidOption(key: key, problem: problem)
        }
        library = try reader.string("library", expected: "a path string")
        cacheWeights = try reader.bool("cache-weights") ?? cacheWeights
        minimumBatch =
            try reader.int("minimum-batch", range: 1...Int.max, expected: "a whole number of tokens ≥ 1")
            ?? minimumBatch
        kernels = reader.value("kernels")
    }

    /// How the weights reach `cblas_sgemm` and from which batch on, for `sanad backends` and `sanad config`.
    public var weightMode: String {
        let batches = "batches of \(minimumBatch)+ tokens"
        return cacheWeights
            ? "\(batches); weights: F32 copies cached for the session (cache-weights)"
            : "\(batches); weights: dequantized per matrix into reusable scratch (set cache-weights to cache F32 copies)"
    }

    /// The options the pure-Swift session reads.
    var sessionOptions: [String: JSONValue] { kernels.map { ["kernels": $0] } ?? [:] }
}
