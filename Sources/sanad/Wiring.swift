import AbsherData
import BLASBackend
import CreditScoringCLI
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
import SanadReceipts
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
        CreditScoringPlugin.pluginID: {
            try CreditScoringPlugin(context: $0, sender: CreditCommand.webSender, status: CreditCommand.webStatus)
        },
    ])

    static func registry() -> BackendRegistry {
        BackendRegistry(inference: inferenceBackends(), embedding: embeddingBackends())
    }

    /// The product the chat, the web chat and the tools present.
    static let product = AbsherSettings.product

    /// What every command's host is opened with (`HostContext.load(&arguments)`).
    static let host = HostWiring(registry: { registry() }, plugins: plugins, product: product)

    /// The engine a receipt names: its build, and why it cannot be replayed bit for bit elsewhere (nil for the
    /// pure-Swift engine, whose every kernel build computes what the portable one does).
    static func receiptEngine(_ plan: ModelPlan) -> ReceiptEngine {
        let options = plan.options
        let detail: String
        switch plan.backend.availability(options: options.engineOptions) {
        // The library and its build, without the probe's timing (which changes from run to run).
        case .available(let text): detail = text.components(separatedBy: "; probe:")[0]
        case .unavailable(let reason): detail = reason
        }
        let build: String
        let notReplayable: String?
        switch plan.backend.id {
        case "pure-swift":
            let kernels = try? PureSwiftOptions(parsing: options.engineOptions).selectKernels().name
            build = "kernels \(kernels ?? "unknown")"
            notReplayable = nil
        case "blas":
            build = detail
            notReplayable =
                "its prompt batches run through a CBLAS library's sgemm, whose summation order depends on the "
                + "library, its version, the CPU and the threads"
        case "llama":
            build = detail
            notReplayable =
                "libllama computes with the code paths of its build and CPU (a native AVX-512 build rounds "
                + "differently from its AVX2 build), so another machine may compute other logits"
        case "openai":
            build = detail
            notReplayable = "a remote server computed it; its engine, build and hardware are not known to this device"
        default:
            build = detail
            notReplayable = "the engine '\(plan.backend.id)' does not promise the same result on every machine"
        }
        return ReceiptEngine(
            id: plan.backend.id, build: build, notReplayable: notReplayable, threads: options.threads,
            batchSize: options.batchSize, contextLength: options.contextLength ?? 0)
    }
}
