import AbsherData
import BLASBackend
import CreditScoringPlugin
import DependentsPlugin
import FormsPlugin
import LlamaCppBackend
import OCRIngestPlugin
import ProactiveAlertsPlugin
import PureSwiftBackend
import RemoteBackend
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost
import ServicesPlugin

/// The only place that knows every engine and plugin: fills the registries the configs refer to.
enum Wiring {
    /// Engines, in the order `sanad backends` lists them.
    static func inferenceBackends(llamaLibrary: String? = nil) -> [any InferenceBackend] {
        [PureSwiftBackend(), BLASBackend(), LlamaCppBackend(), RemoteBackend()]
    }

    static func embeddingBackends() -> [any EmbeddingBackend] {
        [PureSwiftBackend(), LlamaCppBackend()]
    }

    /// Feature plugins by the id configs use.
    static let plugins = PluginRegistry([
        ProactiveAlertsPlugin.pluginID: { try ProactiveAlertsPlugin(context: $0) },
        DependentsPlugin.pluginID: { try DependentsPlugin(context: $0) },
        ServicesPlugin.pluginID: { try ServicesPlugin(context: $0) },
        DocumentIngestPlugin.pluginID: { try DocumentIngestPlugin(context: $0) },
        FormsPlugin.pluginID: { try FormsPlugin(context: $0) },
        CreditScoringPlugin.pluginID: { try CreditScoringPlugin(context: $0) },
    ])

    static func registry() -> BackendRegistry {
        BackendRegistry(inference: inferenceBackends(), embedding: embeddingBackends())
    }

    /// The product the chat, the web chat and the tools present.
    static let product = AbsherSettings.product

    /// What every command's host is opened with (`HostContext.load(&arguments)`).
    static let host = HostWiring(registry: { registry() }, plugins: plugins, product: product)
}
