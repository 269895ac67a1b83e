import Foundation
import GGUF
// The engine's kernels are part of its API (WeightMatrix, matmul, …); re-exported so that importers of the engine
// see them.
@_exported import PureSwiftKernels
import SanadCore

/// The always-available engine: a pure-Swift CPU transformer reading GGUF files in place (memory-mapped).
public struct PureSwiftBackend: InferenceBackend {
    public init() {}
    public var id: String { "pure-swift" }
    public var summary: String {
        "pure-Swift CPU transformer (GGUF: \(ArchitectureRegistry.supported.joined(separator: ", ")); always available)"
    }
    public var availability: BackendAvailability {
        .available(
            detail: "built in; kernels: \(KernelBuilds.runnable[0].name) (this CPU runs "
                + KernelBuilds.runnable.map(\.name).joined(separator: ", ") + "; SANAD_KERNELS picks one)")
    }

    public func loadModel(at url: URL, options: ModelLoadOptions) async throws -> any InferenceSession {
        try PureSwiftSession(path: url.path, options: options)
    }
}
