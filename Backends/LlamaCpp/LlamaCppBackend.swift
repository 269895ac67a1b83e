import Foundation
import GGUF
import SanadCore

/// llama.cpp's libllama (build b11434) loaded at run time with `dlopen`, behind an ABI guard.
///
/// The library is found through, in order: the `library` engine option of the host config (or the `library`
/// init parameter), `SANAD_LIBLLAMA`, the system loader's search for `libllama.so`, and `/usr/local/lib/libllama.so`
/// (see `LlamaLibraryLocator`). A library that is not the b11434 build is refused (`LlamaABIGuard`) and the backend
/// reports `.unavailable` with the reason, so the host config falls back to the next engine.
///
/// Engine options: `library` (path), `template` (chat template family, overriding the model's), `pooling`
/// (`mean`/`cls`/`last`, embeddings only).
public struct LlamaCppBackend: OptionsValidatingBackend, EmbeddingBackend {
    /// A library path that takes precedence over `SANAD_LIBLLAMA` and the default locations.
    public let library: String?

    public init(library: String? = nil) {
        self.library = library
    }

    public var id: String { "llama" }
    public var summary: String { "llama.cpp b11434 (libllama via dlopen, ABI-checked)" }

    /// Loads and checks the library (once per process and path) and proves it computes (`LlamaProbe` in a child
    /// process); `.unavailable` names the expected build, what was found or what happened, and the fix. The detail
    /// says how scripts/install-llama built it (its stamp) and what the probe ran.
    public var availability: BackendAvailability {
        switch LlamaLibrary.resolve(option: library) {
        case .success(let lib):
            var detail = "\(LlamaABIGuard.expectedBuild) (llama_version \(lib.version)) at \(lib.path)"
            if let build = Self.installedBuild(library: lib.path) { detail += "; built \(build)" }
            let verdict = LlamaLibrary.probeVerdict(path: lib.path, environment: ProcessInfo.processInfo.environment)
            detail += "; probe: \(verdict.detail)\(verdict.cached ? " (cached)" : "")"
            return .available(detail: detail)
        case .failure(let error):
            return .unavailable(reason: error.reason)
        }
    }

    /// libllama reads every architecture and type llama.cpp b11434 implements; which those are is its business, so
    /// an available library tells when the file loads.
    public func support(for model: GGUFFile, options: [String: JSONValue]) -> ModelSupport {
        if case .unavailable(let reason) = availability(options: options) { return .cannot(reason: reason) }
        return .atLoad(detail: "\(LlamaABIGuard.expectedBuild) reads the architectures and types it implements")
    }

    public func loadModel(at url: URL, options: ModelLoadOptions) async throws -> any InferenceSession {
        try LlamaSession(library: try resolvedLibrary(options), url: url, options: options)
    }

    /// `count` sessions on one model and one context, a sequence each, whose generations share `llama_decode`
    /// batches (continuous batching, `LlamaSession.sharing`).
    public func loadModels(at url: URL, options: ModelLoadOptions, count: Int) async throws -> [any InferenceSession] {
        try LlamaSession.sharing(count: count, library: try resolvedLibrary(options), url: url, options: options)
    }

    public var sharesForwardPasses: Bool { true }

    public func loadEmbeddingModel(at url: URL, options: ModelLoadOptions) async throws -> any EmbeddingModel {
        try LlamaEmbeddingModel(library: try resolvedLibrary(options), url: url, options: options)
    }

    /// llama.cpp's own rendering of `messages` with `llama_chat_apply_template` (`template` is a built-in name such
    /// as `chatml`/`gemma`, or a Jinja string it recognises). Sessions use SanadCore's `ChatTemplate` instead; this
    /// is the reference that `ChatTemplate` is checked against.
    public func llamaChatApplyTemplate(_ template: String, messages: [ChatMessage], addAssistantPrompt: Bool) throws
        -> String
    {
        let lib = try resolvedLibrary(ModelLoadOptions())
        var owned: [UnsafeMutablePointer<CChar>] = []
        defer { for p in owned { p.deallocate() } }
        func cString(_ s: String) -> UnsafePointer<CChar> {
            let bytes = Array(s.utf8CString)
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
            p.initialize(from: bytes, count: bytes.count)
            owned.append(p)
            return UnsafePointer(p)
        }
        let chat = messages.map { LlamaChatMessage(role: cString($0.role.rawValue), content: cString($0.content)) }
        let total = messages.reduce(0) { $0 + $1.content.utf8.count + 64 }
        var buffer = [CChar](repeating: 0, count: max(256, 2 * total))
        func run() -> Int32 {
            template.withCString { t in
                chat.withUnsafeBytes { c in
                    lib.chatApplyTemplate(
                        t, c.baseAddress, chat.count, addAssistantPrompt, &buffer, Int32(buffer.count))
                }
            }
        }
        var n = run()
        if n > Int32(buffer.count) {
            buffer = [CChar](repeating: 0, count: Int(n) + 1)
            n = run()
        }
        guard n >= 0 else {
            throw LlamaCppError.invalidOption(
                key: "template", problem: "llama_chat_apply_template does not know \"\(template.prefix(40))\"")
        }
        return String(decoding: buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How scripts/install-llama built the library at `library`: its stamp's `build` line (and `why`, when the
    /// native build was replaced), from PREFIX/share/sanad beside PREFIX/lib; nil for a library installed otherwise.
    static func installedBuild(library: String) -> String? {
        let lib = URL(fileURLWithPath: library).resolvingSymlinksInPath().deletingLastPathComponent()
        let stamp = lib.deletingLastPathComponent().appendingPathComponent(
            "share/sanad/llama-\(LlamaABIGuard.expectedBuild.split(separator: " ").last ?? "").stamp")
        guard let text = try? String(contentsOf: stamp, encoding: .utf8) else { return nil }
        func field(_ key: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix("\(key): ") }.map { String($0.dropFirst(key.count + 2)) }
        }
        guard let build = field("build") else { return nil }
        return field("why").map { "\(build) (\($0))" } ?? build
    }

    public func validateOptions(_ options: [String: JSONValue]) throws {
        _ = try LlamaOptions(parsing: options)
    }

    private func resolvedLibrary(_ options: ModelLoadOptions) throws -> LlamaLibrary {
        let path = try LlamaOptions(parsing: options.engineOptions).library ?? library
        switch LlamaLibrary.resolve(option: path) {
        case .success(let lib): return lib
        case .failure(let error): throw SanadError.backendUnavailable(id: id, reason: error.reason)
        }
    }
}
