import Foundation
import GGUF
import PureSwiftBackend
import SanadCore

/// The pure-Swift engine with BLAS matrix products for prompt batches: the same model code (architectures,
/// tokenizer, sampling, KV cache), with every projection of a batch of `minimum-batch` tokens or more computed by
/// `cblas_sgemm` of a CBLAS library loaded at run time with `dlopen` (OpenBLAS by default). Generation (one token at a
/// time) stays on the pure-Swift kernels, where a matrix-vector product over quantized weights beats `sgemv` over
/// F32 ones.
///
/// The library is found through, in order: the `library` engine option of the host config (or the `library` init
/// parameter), `SANAD_BLAS`, and the system loader's search for `libopenblas.so.0`, `libopenblas.so`,
/// `libblis.so.4`, `libcblas.so.3` (see `BLASLibraryLocator`). Without one the engine reports `.unavailable` with
/// the install command, and the host config falls back to the next engine.
///
/// The configured thread count is the number of the engine's workers; each runs a single-threaded `sgemm` on its
/// share of the weight rows (the library's own thread pool is set to one thread, so the two pools never compete for
/// the cores).
///
/// Engine options (`BLASOptions`): `library` (path), `cache-weights` (keep F32 copies of the weights; the memory
/// estimate counts them), `minimum-batch` (default 32), `kernels` (passed to the pure-Swift
/// engine).
public struct BLASBackend: OptionsValidatingBackend {
    /// A library path that takes precedence over `SANAD_BLAS` and the loader's search.
    public let library: String?

    public init(library: String? = nil) {
        self.library = library
    }

    public var id: String { "blas" }
    public var summary: String {
        "pure-Swift transformer with CBLAS sgemm for prompt batches (OpenBLAS/BLIS via dlopen)"
    }

    public var availability: BackendAvailability { availability(options: [:]) }

    /// Finds and checks the library (once per process and path); the detail names it and says how the weights
    /// reach `cblas_sgemm`.
    public func availability(options: [String: JSONValue]) -> BackendAvailability {
        let settings: BLASOptions
        do {
            settings = try self.settings(options)
        } catch let error as BLASError {
            return .unavailable(reason: error.reason)
        } catch {
            return .unavailable(reason: "\(error)")
        }
        switch BLASLibrary.resolve(option: settings.library) {
        case .success(let library):
            return .available(detail: "\(library.detail); \(settings.weightMode)")
        case .failure(let error):
            return .unavailable(reason: error.reason)
        }
    }

    /// The pure-Swift engine's models (it runs them, with OpenBLAS for the prompt's products), when OpenBLAS is there.
    public func support(for model: GGUFFile, options: [String: JSONValue]) -> ModelSupport {
        ArchitectureRegistry.support(
            for: model, availability: availability(options: options),
            detail: "the pure-Swift engine's model code with OpenBLAS for prompts")
    }

    public func loadModel(at url: URL, options: ModelLoadOptions) async throws -> any InferenceSession {
        let (sessionOptions, products) = try sessionSettings(options)
        return try PureSwiftSession(path: url.path, options: sessionOptions, batchedProducts: products)
    }

    /// One model and runner for `count` sessions, whose concurrent generations are batched (as the pure-Swift
    /// engine's, `PureSwiftSession.sharing`).
    public func loadModels(at url: URL, options: ModelLoadOptions, count: Int) async throws -> [any InferenceSession] {
        let (sessionOptions, products) = try sessionSettings(options)
        return try PureSwiftSession.sharing(
            count: count, path: url.path, options: sessionOptions, batchedProducts: products)
    }

    public var sharesForwardPasses: Bool { true }

    /// The pure-Swift session's options and the products this engine hands it.
    private func sessionSettings(_ options: ModelLoadOptions) throws -> (ModelLoadOptions, any BatchedProducts) {
        let settings = try self.settings(options.engineOptions)
        let products = try makeProducts(threads: options.threads, options: options.engineOptions)
        var sessionOptions = options
        sessionOptions.engineOptions = settings.sessionOptions
        return (sessionOptions, products)
    }

    /// The matrix products a session of this engine hands its runner, on `threads` of the engine's workers. Throws
    /// `backendUnavailable` without a usable library, `BLASError.invalidOption` for a bad option.
    public func makeProducts(threads: Int, options: [String: JSONValue] = [:]) throws -> any BatchedProducts {
        let settings = try self.settings(options)
        switch BLASLibrary.resolve(option: settings.library) {
        case .success(let library):
            let kernels = try KernelBuilds.select(PureSwiftOptions.kernelBuildName(settings.kernels?.stringValue))
            return BLASProducts(
                library: library, threads: threads, minimumBatch: settings.minimumBatch,
                cacheWeights: settings.cacheWeights, kernels: kernels)
        case .failure(let error):
            throw SanadError.backendUnavailable(id: id, reason: error.reason)
        }
    }

    /// The F32 weights: every quantized matrix of the layers with `cache-weights`, else the scratch for the largest.
    public func additionalMemory(model: GGUFFile, options: [String: JSONValue]) -> EngineMemory? {
        let cacheWeights = (try? settings(options))?.cacheWeights ?? false
        let sizes = dequantizedMatrixBytes(model)
        return cacheWeights
            ? EngineMemory(bytes: sizes.reduce(0, +), label: "BLAS F32 weights (cache-weights)")
            : EngineMemory(bytes: sizes.max() ?? 0, label: "BLAS dequantization scratch")
    }

    public func validateOptions(_ options: [String: JSONValue]) throws {
        _ = try BLASOptions(parsing: options)
    }

    /// The options, with the init parameter as the library unless the options name one.
    private func settings(_ options: [String: JSONValue]) throws -> BLASOptions {
        var settings = try BLASOptions(parsing: options)
        if settings.library == nil { settings.library = library }
        return settings
    }
}

/// F32 bytes of each matrix the runner hands to BLAS: the 2-D quantized tensors of the layers (`blk.N.…`), with
/// one offset per 32 weights for Q4_1.
func dequantizedMatrixBytes(_ file: GGUFFile) -> [Int] {
    file.tensors
        .filter { $0.name.hasPrefix("blk.") && $0.dimensions.count == 2 && $0.type != .f32 }
        .map { ($0.elementCount + ($0.type == .q4_1 ? $0.elementCount / 32 : 0)) * MemoryLayout<Float>.size }
}
