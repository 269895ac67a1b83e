import Foundation
import GGUF

/// Whether an engine can run on this machine, and if not, why — in words a person can act on.
public enum BackendAvailability: Sendable, Equatable {
    /// Ready; `detail` says what was found (library path, ISA, …).
    case available(detail: String)
    /// Not usable here; `reason` names what is missing and how to install it.
    case unavailable(reason: String)

    public var isAvailable: Bool {
        if case .available = self { return true }
        return false
    }
}

/// How to load a model into a session.
public struct ModelLoadOptions: Sendable, Equatable {
    /// Worker threads for compute.
    public var threads: Int
    /// Context length in tokens (the KV cache size); `nil` = the model's own training context.
    public var contextLength: Int?
    /// Tokens processed per forward pass while reading a prompt.
    public var batchSize: Int
    /// Seed for sampling.
    public var seed: UInt64
    /// Per-engine options from the host config (for example a library path).
    public var engineOptions: [String: JSONValue]
    /// How the KV cache stores keys and values (llama.cpp's `-ctk`/`-ctv`, one of `GGMLType.cacheTypes`): F16 by
    /// default; Q8_0 takes about half the memory (the pure-Swift and BLAS engines store F16 and Q8_0).
    public var cacheTypeK: GGMLType
    public var cacheTypeV: GGMLType

    public init(
        threads: Int = ProcessInfo.processInfo.activeProcessorCount, contextLength: Int? = nil, batchSize: Int = 512,
        seed: UInt64 = 0xC0FFEE, engineOptions: [String: JSONValue] = [:], cacheTypeK: GGMLType = .f16,
        cacheTypeV: GGMLType = .f16
    ) {
        self.threads = max(1, threads)
        self.contextLength = contextLength
        self.batchSize = max(1, batchSize)
        self.seed = seed
        self.engineOptions = engineOptions
        self.cacheTypeK = cacheTypeK
        self.cacheTypeV = cacheTypeV
    }
}

/// Whether an engine can run a model file, judged from the file's metadata without loading it (`sanad models`).
public enum ModelSupport: Sendable, Equatable {
    /// It can: the architecture, every tensor type and the tokenizer are ones it implements.
    case runs(detail: String)
    /// It cannot, and why (the architecture, tensor type or tokenizer it lacks, or that it is unavailable here).
    case cannot(reason: String)
    /// It can tell only by loading the file.
    case atLoad(detail: String)
}

/// An inference engine: identity, availability, and a factory of model sessions.
public protocol InferenceBackend: Sendable {
    /// The id configs and `--backend` use (`pure-swift`, `blas`, `llama`).
    var id: String { get }
    /// One line for `sanad backends`.
    var summary: String { get }
    /// Checked without loading a model.
    var availability: BackendAvailability { get }
    /// Loads the model file at `url` into a new session.
    func loadModel(at url: URL, options: ModelLoadOptions) async throws -> any InferenceSession
    /// `count` sessions of the model at `url` for requests served at the same time (a server's slots). Default:
    /// `count` independent loads. An engine that batches (`sharesForwardPasses`) loads the model once and runs the
    /// steps of generations in different sessions together.
    func loadModels(at url: URL, options: ModelLoadOptions, count: Int) async throws -> [any InferenceSession]
    /// Whether `loadModels` gives sessions that share one model, its threads and its forward passes (so each should
    /// have all the threads, not a share of them). Default: false.
    var sharesForwardPasses: Bool { get }
    /// Availability with a host config's engine options (a `library` path, for example); the detail may say how
    /// the options make the engine run. Default: `availability`.
    func availability(options: [String: JSONValue]) -> BackendAvailability
    /// Memory the engine needs for `model` with `options` beyond `MemoryEstimate`'s weights, KV cache and scratch
    /// (the BLAS engine's F32 weights, for example); nil when none. Default: nil.
    func additionalMemory(model: GGUFFile, options: [String: JSONValue]) -> EngineMemory?
    /// Whether this engine, with a host config's `options`, can run `model`. Default: unavailable engines cannot;
    /// others tell at load.
    func support(for model: GGUFFile, options: [String: JSONValue]) -> ModelSupport
}

extension InferenceBackend {
    public func loadModels(at url: URL, options: ModelLoadOptions, count: Int) async throws -> [any InferenceSession] {
        var sessions: [any InferenceSession] = []
        for _ in 0..<max(1, count) { sessions.append(try await loadModel(at: url, options: options)) }
        return sessions
    }
    public var sharesForwardPasses: Bool { false }
    public func availability(options: [String: JSONValue]) -> BackendAvailability { availability }
    public func additionalMemory(model: GGUFFile, options: [String: JSONValue]) -> EngineMemory? { nil }
    public func support(for model: GGUFFile, options: [String: JSONValue]) -> ModelSupport {
        if case .unavailable(let reason) = availability(options: options) { return .cannot(reason: reason) }
        return .atLoad(detail: "checked when it loads")
    }
}

/// Memory an engine adds to a model's estimate, and what it holds.
public struct EngineMemory: Sendable, Equatable {
    public var bytes: Int
    /// A few words for the estimate line: `BLAS F32 weights (cache-weights)`.
    public var label: String

    public init(bytes: Int, label: String) {
        self.bytes = bytes
        self.label = label
    }
}

/// What a loaded model tells about itself.
public struct ModelDescription: Sendable, Equatable {
    public var name: String
    public var architecture: String
    public var parameterCount: Int
    public var fileSize: Int
    public var contextLength: Int
    public var trainingContextLength: Int
    public var vocabularySize: Int
    /// Whether tokenizing with `addSpecial` puts BOS in front.
    public var addsBOS: Bool
    public var bosToken: Int32?
    /// The end-of-sequence token, for a chat template's `eos_token`.
    public var eosToken: Int32?

    public init(
        name: String, architecture: String, parameterCount: Int, fileSize: Int, contextLength: Int,
        trainingContextLength: Int, vocabularySize: Int, addsBOS: Bool, bosToken: Int32?, eosToken: Int32? = nil
    ) {
        self.eosToken = eosToken
        self.name = name
        self.architecture = architecture
        self.parameterCount = parameterCount
        self.fileSize = fileSize
        self.contextLength = contextLength
        self.trainingContextLength = trainingContextLength
        self.vocabularySize = vocabularySize
        self.addsBOS = addsBOS
        self.bosToken = bosToken
    }
}

/// The input of a generation: text to tokenize, or token ids as they are.
public enum GenerationInput: Sendable, Equatable {
    /// Text; BOS is added if the model adds one; special tokens in the text are parsed when `parseSpecial`.
    case text(String, parseSpecial: Bool)
    case tokens([Int32])
}

/// One streamed event of a generation.
public enum GenerationEvent: Sendable, Equatable {
    /// A token was sampled. `text` is the complete UTF-8 text it finishes (possibly empty while a multi-byte
    /// character is still incomplete; never a broken character).
    case token(id: Int32, text: String)
    /// Generation ended.
    case finished(StopReason, GenerationStats)
}

/// Why generation stopped.
public enum StopReason: String, Sendable, Equatable, Codable {
    /// The model produced an end-of-generation token.
    case endOfGeneration
    /// The requested number of tokens was produced.
    case maxTokens
    /// A caller-given stop string appeared (it is not included in the text).
    case stopString
    /// The consumer cancelled.
    case cancelled
    /// The context is full.
    case contextFull
}

/// Timing of one generation.
public struct GenerationStats: Sendable, Equatable, Codable {
    public var promptTokens: Int
    public var generatedTokens: Int
    /// Seconds spent reading the prompt.
    public var promptSeconds: Double
    /// Seconds spent generating (after the prompt).
    public var generationSeconds: Double
    /// Of `generationSeconds`, the time a constraint stage spent masking the logits (0 without one, or when the
    /// engine constrains inside its own sampler).
    public var constraintSeconds: Double
    /// Of `generationSeconds`, the time a constraint stage spent once on the model's vocabulary (indexing it), which
    /// later generations in the same process do not pay; not part of `constraintSeconds`.
    public var constraintPreparationSeconds: Double

    public init(
        promptTokens: Int = 0, generatedTokens: Int = 0, promptSeconds: Double = 0, generationSeconds: Double = 0,
        constraintSeconds: Double = 0, constraintPreparationSeconds: Double = 0
    ) {
        self.promptTokens = promptTokens
        self.generatedTokens = generatedTokens
        self.promptSeconds = promptSeconds
        self.generationSeconds = generationSeconds
        self.constraintSeconds = constraintSeconds
        self.constraintPreparationSeconds = constraintPreparationSeconds
    }

    public var promptTokensPerSecond: Double { promptSeconds > 0 ? Double(promptTokens) / promptSeconds : 0 }
    public var generationTokensPerSecond: Double {
        generationSeconds > 0 ? Double(generatedTokens) / generationSeconds : 0
    }
}

/// A loaded model with its KV cache. One generation at a time; `reset()` clears the cache for the next request.
public protocol InferenceSession: AnyObject, Sendable {
    var model: ModelDescription { get }

    /// Token ids of `text`. `addSpecial` adds BOS (and EOS) as the model's flags say; `parseSpecial` turns
    /// special-token text such as `<|im_start|>` into its token instead of plain text.
    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32]
    /// Text of `tokens` (special tokens rendered when `renderSpecial`).
    func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String
    /// The model's chat template applied to `messages` (its own Jinja `tokenizer.chat_template` through the
    /// interpreter, else a built-in family: `ModelChatTemplate`); `addAssistantPrompt` opens the assistant turn.
    func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String

    /// Generates a continuation of `input` after whatever the session already holds, by the shared
    /// `GenerationLoop`'s policies (README.md, "Generation"). Cancelling the consuming task (or dropping the stream)
    /// stops work within a few tokens. A prompt that does not fit the context throws `SanadError.promptTooLong`
    /// unless `parameters.truncatePrompt`.
    func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    >

    /// Logits (vocabulary-sized rows) for each position of `tokens`, evaluated from an empty cache; the session is
    /// reset afterwards. `rows` selects which positions to return (all when nil). Used by perplexity and compare.
    func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]]

    /// Appends `tokens` to what the session holds, running them through the model in batches and computing the
    /// logits of the last one — no sampling, no text. The unit of work `sanad bench` times (llama-bench's
    /// `test_prompt`/`test_gen`). Throws `promptTooLong` when the context would overflow.
    func append(_ tokens: [Int32]) throws

    /// Clears the KV cache and sampler state.
    func reset()
}

extension InferenceSession {
    public func tokenize(_ text: String) throws -> [Int32] {
        try tokenize(text, addSpecial: true, parseSpecial: false)
    }

    /// The texts of the model's BOS and EOS tokens, as a Jinja chat template sees them.
    public var chatSpecialTokens: ChatSpecialTokens {
        ChatSpecialTokens(
            bos: model.bosToken.map { detokenize([$0], renderSpecial: true) } ?? "",
            eos: model.eosToken.map { detokenize([$0], renderSpecial: true) } ?? "", addsBOS: model.addsBOS)
    }

    /// `override` (`--chat-template`) applied with this model's special tokens, else the model's own template.
    public func applyChatTemplate(
        _ messages: [ChatMessage], addAssistantPrompt: Bool, override: ChatPromptTemplate?
    ) throws -> String {
        guard let override else { return try applyChatTemplate(messages, addAssistantPrompt: addAssistantPrompt) }
        return try override.apply(messages, addAssistantPrompt: addAssistantPrompt, specialTokens: chatSpecialTokens)
    }
}
