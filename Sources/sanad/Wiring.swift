import LlamaCppBackend
import PureSwiftBackend
import SanadCore

/// The only place that knows every engine and plugin: fills the registries the configs refer to.
enum Wiring {
    /// Engines, in the order `sanad backends` lists them.
    static func inferenceBackends(llamaLibrary: String? = nil) -> [any InferenceBackend] {
        [PureSwiftBackend(), LlamaCppBackend()]
    }

    static func embeddingBackends() -> [any EmbeddingBackend] {
        []
    }

    static let plugins = PluginRegistry([:])

    static func registry() -> BackendRegistry {
        BackendRegistry(inference: inferenceBackends(), embedding: embeddingBackends())
    }
}
