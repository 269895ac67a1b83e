import Foundation
import GGUF
import PureSwiftKernels
import SanadCore
import SanadTokenizers

/// A model loaded into the pure-Swift engine with its KV cache: tokenizer, chat template, generation and logits.
///
/// Generation is the core's `GenerationLoop` over this engine's `PureSwiftEvaluator`. One request at a time: a second
/// `generate` or `evaluateLogits` waits for the first. The session remembers the tokens in its cache, so a later
/// `generate` continues the conversation; `reset()` forgets them.
// @unchecked Sendable: every operation runs under the generation loop's lock
public final class PureSwiftSession: InferenceSession, @unchecked Sendable {
    public let model: ModelDescription
    public let file: GGUFFile
    public let tokenizer: Tokenizer
    public let network: any LanguageModel
    let runner: any ModelRunner
    let options: ModelLoadOptions

    /// The shared generation loop; it serializes requests and knows what the cache holds.
    private let loop: GenerationLoop
    private let evaluator: PureSwiftEvaluator
    /// The model's chat template (or the built-in family it falls back to).
    private let chatTemplate: ModelChatTemplate

    /// Loads the model at `path`: GGUF header and metadata, the architecture's weights (mapped; Q4_1 projections
    /// copied into the kernels' paired layout) and the tokenizer (built on a second thread meanwhile); allocates the
    /// KV cache for `options.contextLength` (the model's training context when nil).
    /// `options.engineOptions["kernels"]` may name a kernel build ("auto", the default, "avx512vnni", "avx512", "avx2",
    /// "portable"; also the environment variable SANAD_KERNELS); `options.engineOptions["repack-weights"]` (default
    /// true) whether Q4_1 matrices are regrouped into private memory for faster products (`RepackedWeights`).
    /// `batchedProducts` takes over the matrix products of large batches (the BLAS engine).
    public convenience init(path: String, options: ModelLoadOptions, batchedProducts: (any BatchedProducts)? = nil)
        throws
    {
        let loaded = try LoadedModel(path: path, options: options)
        try self.init(
            loaded,
            runner: loaded.network.makeRunner(
                contextLength: loaded.context, batchSize: min(options.batchSize, loaded.context),
                threads: options.threads,
                options: loaded.runnerOptions(batchedProducts)))
    }

    /// `count` sessions of the model at `path` (loaded once) that share one runner, its scratch and its threads,
    /// each with its own KV cache for `options.contextLength`: generations running at the same time in different
    /// sessions run their steps as one forward pass (continuous batching, `SharedDecoder`), each token computed as a
    /// session of its own computes it where the kernels do not round by the batch's size (Q4_1, Q8_0; llama.cpp's
    /// K-quant kernels do). For a server's slots.
    public static func sharing(
        count: Int, path: String, options: ModelLoadOptions, batchedProducts: (any BatchedProducts)? = nil
    ) throws -> [PureSwiftSession] {
        let loaded = try LoadedModel(path: path, options: options)
        let runner = try loaded.network.makeRunner(
            contextLength: loaded.context, batchSize: min(options.batchSize, loaded.context),
            threads: options.threads, options: loaded.runnerOptions(batchedProducts))
        guard let decoderRunner = runner as? any DecoderRunner else {
            throw SanadError.engine(
                "pure-swift: the \(loaded.network.architecture) architecture cannot share its runner between sessions")
        }
        let decoder = try SharedDecoder(runner: decoderRunner, streams: count)
        return try (0..<max(1, count)).map { _ in try PureSwiftSession(loaded, runner: SharedDecoderSlot(decoder)) }
    }

    private init(_ loaded: LoadedModel, runner: any ModelRunner) throws {
        file = loaded.file
        network = loaded.network
        tokenizer = loaded.tokenizer
        options = loaded.options
        self.runner = runner
        evaluator = PureSwiftEvaluator(runner: runner, tokenizer: tokenizer)
        loop = GenerationLoop(evaluator: evaluator)
        let tokenizer = loaded.tokenizer
        chatTemplate = ModelChatTemplate(
            file: file, bos: tokenizer.bos, eos: tokenizer.eos, addsBOS: tokenizer.addsBOS, addsEOS: tokenizer.addsEOS
        ) { tokenizer.decode([$0], renderSpecial: true) }
        model = ModelDescription(
            name: file.string("general.name")
                ?? URL(fileURLWithPath: loaded.path).deletingPathExtension().lastPathComponent,
            architecture: network.architecture, parameterCount: file.parameterCount, fileSize: file.mapping.count,
            contextLength: loaded.context, trainingContextLength: network.trainingContextLength,
            vocabularySize: network.vocabularySize, addsBOS: tokenizer.addsBOS, bosToken: tokenizer.bos,
            eosToken: tokenizer.eos)
    }

    /// For sessions made by `sharing`: the most generations one forward pass has taken so far (1 when none ran
    /// together); 1 for a session of its own.
    public var largestSharedPass: Int { (runner as? SharedDecoderSlot)?.decoder.largestPass ?? 1 }

    /// Tokens the session holds (in its KV cache, or generated and not yet run through the model). Waits for a
    /// running request to finish.
    public var tokenCount: Int { loop.tokenCount }

    // MARK: Text

    public func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        tokenizer.encode(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    public func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String {
        tokenizer.decode(tokens, renderSpecial: renderSpecial)
    }

    /// The model's own Jinja template (or the built-in family it falls back to: `ModelChatTemplate`).
    public func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        try chatTemplate.apply(messages, addAssistantPrompt: addAssistantPrompt)
    }

    // MARK: Generation

    public func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        loop.generate(input, parameters: parameters, threadName: "sanad.pure-swift.generate")
    }

    // MARK: Logits

    public func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        try evaluator.checkTokens(tokens)
        guard tokens.count <= runner.contextLength else {
            throw SanadError.promptTooLong(tokens: tokens.count, context: runner.contextLength)
        }
        let wanted = (rows ?? 0..<tokens.count).clamped(to: 0..<tokens.count)
        return loop.withEmptyCache {
            let vocabularySize = network.vocabularySize
            var result: [[Float]] = []
            result.reserveCapacity(wanted.count)
            let scratch = UnsafeMutablePointer<Float>.allocate(
                capacity: min(runner.batchSize, tokens.count) * vocabularySize)
            defer { scratch.deallocate() }
            tokens.withUnsafeBufferPointer { all in
                var start = 0
                while start < all.count {
                    let end = min(start + runner.batchSize, all.count)
                    let outputs = wanted.clamped(to: start..<end)
                    runner.evaluate(
                        UnsafeBufferPointer(rebasing: all[start..<end]),
                        outputs: (outputs.lowerBound - start)..<(outputs.upperBound - start), logits: scratch)
                    for i in 0..<outputs.count {
                        result.append(
                            Array(UnsafeBufferPointer(start: scratch + i * vocabularySize, count: vocabularySize)))
                    }
                    start = end
                }
            }
            return result
        }
    }

    public func append(_ tokens: [Int32]) throws {
        try loop.append(tokens)
    }

    public func reset() {
        loop.reset()
    }
}

/// What the pure-Swift engine supplies to the shared `GenerationLoop`: its tokenizer, its runner's batched
/// evaluation, and its logits for the core's sampling chain.
final class PureSwiftEvaluator: TokenEvaluator {
    let runner: any ModelRunner
    let tokenizer: Tokenizer
    /// Logits of the last evaluated position (`vocabularySize` floats).
    private let logits: UnsafeMutablePointer<Float>

    init(runner: any ModelRunner, tokenizer: Tokenizer) {
        self.runner = runner
        self.tokenizer = tokenizer
        logits = .allocate(capacity: runner.vocabularySize)
        logits.initialize(repeating: 0, count: runner.vocabularySize)
    }

    deinit { logits.deallocate() }

    var contextLength: Int { runner.contextLength }
    var addsBOS: Bool { tokenizer.addsBOS }
    var bosToken: Int32? { tokenizer.bos }

    func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        tokenizer.encode(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    func checkTokens(_ tokens: [Int32]) throws {
        for t in tokens where t < 0 || Int(t) >= runner.vocabularySize {
            throw PureSwiftError.tokenOutOfRange(token: t, vocabularySize: runner.vocabularySize)
        }
    }

    func pieceBytes(_ token: Int32) -> [UInt8] {
        tokenizer.pieceBytes(token, renderSpecial: true)
    }

    func isEndOfGeneration(_ token: Int32) -> Bool {
        tokenizer.isEndOfGeneration(token)
    }

    /// Runs `tokens` through the runner in batches of its batch size, checking `cancellation` before each; the last
    /// position's logits land in `logits`. The runner keeps its own position, which is `position`.
    func evaluate(_ tokens: [Int32], at position: Int, cancellation: GenerationCancellation) throws -> Int {
        var start = 0
        tokens.withUnsafeBufferPointer { all in
            while start < all.count {
                if cancellation.isCancelled { return }
                let end = min(start + runner.batchSize, all.count)
                let batch = UnsafeBufferPointer(rebasing: all[start..<end])
                let outputs = end == all.count ? (batch.count - 1)..<batch.count : 0..<0
                runner.evaluate(batch, outputs: outputs, logits: logits)
                start = end
            }
        }
        return start
    }

    func clearCache() {
        runner.reset()
    }

    func makeSampler(_ parameters: SamplingParameters, history: [Int32]) throws -> any TokenSampler {
        LogitsSampler(parameters, logits: UnsafeMutableBufferPointer(start: logits, count: runner.vocabularySize))
    }
}

/// The outcome of loading a tokenizer on another thread (written there once, read after the wait).
// @unchecked Sendable: written once by the loading thread, read after the wait
private final class TokenizerLoad: @unchecked Sendable {
    var value: Result<Tokenizer, any Error>?
}

/// A model file read for the engine: its GGUF file, the architecture's weights, the tokenizer, the context and the
/// kernel build the options pick.
private struct LoadedModel {
    let path: String
    let options: ModelLoadOptions
    let file: GGUFFile
    let network: any LanguageModel
    let tokenizer: Tokenizer
    let context: Int
    let kernels: any KernelSet

    /// Loads the model at `path`: GGUF header and metadata, the architecture's weights (mapped; Q4_1 projections
    /// copied into the kernels' paired layout) and the tokenizer (built on a second thread meanwhile).
    init(path: String, options: ModelLoadOptions) throws {
        self.path = path
        self.options = options
        let file = try GGUFFile.shared(path: path)
        // Before the tokenizer and the weights are read: plausible, consistent (the check every engine runs).
        try ModelValidation.validate(file)
        let settings = try PureSwiftOptions(parsing: options.engineOptions)
        // The tokenizer's tables are built on another thread while the weights load (and are repacked).
        let tokenizerResult = TokenizerLoad()
        let tokenizerGroup = DispatchGroup()
        DispatchQueue.global(qos: .userInitiated).async(group: tokenizerGroup) {
            tokenizerResult.value = Result { try Tokenizer.load(from: file) }
        }
        let network: any LanguageModel
        do {
            network = try ArchitectureRegistry.load(file, repackWeights: settings.repackWeights)
        } catch {
            tokenizerGroup.wait()
            throw error
        }
        tokenizerGroup.wait()
        guard let tokenizerLoad = tokenizerResult.value else {
            throw SanadError.engine("pure-swift: the tokenizer of \(path) did not load")
        }
        tokenizer = try tokenizerLoad.get()
        context = options.contextLength ?? network.trainingContextLength
        guard context > 0 else {
            throw SanadError.engine("the context length must be positive (got \(context)); pass -c N")
        }
        kernels = try settings.selectKernels()
        self.file = file
        self.network = network
    }

    /// The runner options of these load options: the kernel build, the cache types, and `batchedProducts`.
    func runnerOptions(_ batchedProducts: (any BatchedProducts)?) -> RunnerOptions {
        RunnerOptions(
            kernels: kernels, batchedProducts: batchedProducts, cacheKeyType: options.cacheTypeK,
            cacheValueType: options.cacheTypeV)
    }
}
