import Foundation
import GGUF
import PureSwiftKernels
import SanadCore

/// A model loaded into the pure-Swift engine with its KV cache: tokenizer, chat template, generation and logits.
///
/// One request at a time: a second `generate` or `evaluateLogits` waits for the first. The session remembers the
/// tokens in its cache, so a later `generate` continues the conversation; `reset()` forgets them.
public final class PureSwiftSession: InferenceSession, @unchecked Sendable {
    public let model: ModelDescription
    public let file: GGUFFile
    public let tokenizer: Tokenizer
    public let network: any LanguageModel
    let runner: any ModelRunner
    let options: ModelLoadOptions

    /// Serializes requests; guards everything below.
    private let lock = NSLock()
    /// Tokens whose keys and values are in the cache, in order.
    private var cached: [Int32] = []
    /// A generated token that was returned but not yet run through the model (the next request starts with it).
    private var unevaluated: [Int32] = []
    /// Logits of the last evaluated position (`vocabularySize` floats).
    private let logits: UnsafeMutablePointer<Float>
    private var haveLogits = false

    /// Loads the model at `path`: GGUF header and metadata, the architecture's weights (mapped; Q4_1 projections
    /// copied into the kernels' paired layout) and the tokenizer (built on a second thread meanwhile); allocates the
    /// KV cache for `options.contextLength` (the model's training context when nil).
    /// `options.engineOptions["kernels"]` may name a kernel build ("auto", the default, "avx512", "avx2",
    /// "portable"; also the environment variable SANAD_KERNELS); `options.engineOptions["repack-weights"]` (default
    /// true) whether Q4_1 matrices are regrouped into private memory for faster products (`RepackedWeights`).
    /// `batchedProducts` takes over the matrix products of large batches (the BLAS engine).
    public init(path: String, options: ModelLoadOptions, batchedProducts: (any BatchedProducts)? = nil) throws {
        let file = try GGUFFile(path: path)
        // Before the tokenizer and the weights are read: plausible, consistent (the check every engine runs).
        try ModelValidation.validate(file)
        let repackOption = options.engineOptions["repack-weights"]
        if let repackOption, repackOption.boolValue == nil {
            throw SanadError.engine(
                "pure-swift: engine option 'repack-weights' is \(repackOption); use true (the default) or false")
        }
        // The tokenizer's tables are built on another thread while the weights load (and are repacked).
        let tokenizerResult = TokenizerLoad()
        let tokenizerGroup = DispatchGroup()
        DispatchQueue.global(qos: .userInitiated).async(group: tokenizerGroup) {
            tokenizerResult.value = Result { try Tokenizer.load(from: file) }
        }
        let network: any LanguageModel
        do {
            network = try ArchitectureRegistry.load(file, repackWeights: repackOption?.boolValue ?? true)
        } catch {
            tokenizerGroup.wait()
            throw error
        }
        tokenizerGroup.wait()
        let tokenizer = try tokenizerResult.value!.get()
        let context = options.contextLength ?? network.trainingContextLength
        guard context > 0 else {
            throw SanadError.engine("the context length must be positive (got \(context)); pass -c N")
        }
        let kernelOption = options.engineOptions["kernels"]
        if let kernelOption, kernelOption.stringValue == nil {
            throw SanadError.engine(
                "pure-swift: engine option 'kernels' is \(kernelOption); use a build name such as \"auto\"")
        }
        let kernels = try KernelBuilds.select(
            kernelOption?.stringValue ?? ProcessInfo.processInfo.environment["SANAD_KERNELS"])
        self.file = file
        self.network = network
        self.tokenizer = tokenizer
        self.options = options
        runner = try network.makeRunner(
            contextLength: context, batchSize: min(options.batchSize, context), threads: options.threads,
            options: RunnerOptions(kernels: kernels, batchedProducts: batchedProducts))
        logits = .allocate(capacity: network.vocabularySize)
        logits.initialize(repeating: 0, count: network.vocabularySize)
        model = ModelDescription(
            name: file.string("general.name") ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
            architecture: network.architecture, parameterCount: file.parameterCount, fileSize: file.mapping.count,
            contextLength: context, trainingContextLength: network.trainingContextLength,
            vocabularySize: network.vocabularySize, addsBOS: tokenizer.addsBOS, bosToken: tokenizer.bos)
    }

    deinit { logits.deallocate() }

    /// Tokens the session holds (in its KV cache, or generated and not yet run through the model). Waits for a
    /// running request to finish.
    public var tokenCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return cached.count + unevaluated.count
    }

    // MARK: Text

    public func tokenize(_ text: String, addSpecial: Bool, parseSpecial: Bool) throws -> [Int32] {
        tokenizer.encode(text, addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    public func detokenize(_ tokens: [Int32], renderSpecial: Bool) -> String {
        tokenizer.decode(tokens, renderSpecial: renderSpecial)
    }

    public func applyChatTemplate(_ messages: [ChatMessage], addAssistantPrompt: Bool) throws -> String {
        try ChatTemplate.resolve(jinja: file.string("tokenizer.chat_template"))
            .apply(messages, addAssistantPrompt: addAssistantPrompt)
    }

    // MARK: Generation

    /// Events the generation thread may run ahead of the stream's consumer.
    static let eventsAhead = 4

    public func generate(_ input: GenerationInput, parameters: GenerationParameters) -> AsyncThrowingStream<
        GenerationEvent, Error
    > {
        // A bounded buffer: the generation thread stays at most `eventsAhead` events ahead of the consumer, so a
        // consumer that stops (or is starved of CPU by the engine's own threads) stops generation within a few
        // tokens instead of letting it run on unseen.
        AsyncThrowingStream(GenerationEvent.self, bufferingPolicy: .bufferingOldest(Self.eventsAhead)) {
            continuation in
            let cancelled = CancellationFlag()
            continuation.onTermination = { _ in cancelled.set() }
            let thread = Thread { [self] in
                do {
                    try self.runGeneration(input, parameters: parameters, cancelled: cancelled) { event in
                        var pending = event
                        // A full buffer refuses the event; wait for the consumer to take one, unless it has gone.
                        while case .dropped(let refused) = continuation.yield(pending), !cancelled.isSet {
                            pending = refused
                            usleep(200)
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            thread.name = "sanad.pure-swift.generate"
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// The generation loop, on the calling thread. `emit` receives every event; the last is `.finished`.
    func runGeneration(
        _ input: GenerationInput, parameters: GenerationParameters, cancelled: CancellationFlag,
        emit: (GenerationEvent) -> Void
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        let context = runner.contextLength

        var prompt: [Int32]
        switch input {
        case .text(let text, let parseSpecial):
            prompt = tokenizer.encode(
                text, addSpecial: cached.isEmpty && unevaluated.isEmpty, parseSpecial: parseSpecial)
        case .tokens(let tokens):
            prompt = tokens
        }
        try validate(prompt)
        prompt = unevaluated + prompt
        if prompt.isEmpty && !haveLogits {
            guard let bos = tokenizer.bos else {
                throw SanadError.engine("the prompt is empty and the model has no BOS token to start from")
            }
            prompt = [bos]
        }
        let room = context - cached.count
        if prompt.count > room {
            // Keep the prompt's end, leaving room for up to half the free context of generated tokens.
            let keep = room - min(max(parameters.maxTokens, 0), room / 2)
            guard parameters.truncatePrompt, keep > 0 else {
                throw SanadError.promptTooLong(tokens: cached.count + prompt.count, context: context)
            }
            prompt = Array(prompt.suffix(keep))
        }
        unevaluated = []

        var stats = GenerationStats(promptTokens: prompt.count)
        let promptStart = DispatchTime.now()
        if !prompt.isEmpty {
            guard evaluate(prompt, cancelled: cancelled) else {
                stats.promptSeconds = seconds(since: promptStart)
                emit(.finished(.cancelled, stats))
                return
            }
        }
        stats.promptSeconds = seconds(since: promptStart)

        let sampler = Sampler(parameters: parameters.sampling)
        var decoder = StreamingDecoder(tokenizer: tokenizer)
        var filter = StopStringFilter(parameters.stopStrings)
        let vocabulary = UnsafeMutableBufferPointer(start: logits, count: network.vocabularySize)
        let generationStart = DispatchTime.now()
        func finish(_ reason: StopReason) {
            stats.generationSeconds = seconds(since: generationStart)
            emit(.finished(reason, stats))
        }
        if parameters.maxTokens <= 0 {
            finish(.maxTokens)
            return
        }
        while true {
            if cancelled.isSet {
                finish(.cancelled)
                return
            }
            let token = sampler.sample(vocabulary, history: cached)
            if tokenizer.isEndOfGeneration(token) {
                // The end token itself is not text; whatever was held back for a stop string comes out with it.
                let rest = filter.flush() + decoder.flush()
                if !rest.isEmpty { emit(.token(id: token, text: rest)) }
                unevaluated = [token]
                finish(.endOfGeneration)
                return
            }
            stats.generatedTokens += 1
            let last = stats.generatedTokens >= parameters.maxTokens
            var (text, stopped) = filter.append(decoder.append(token))
            if last && !stopped { text += filter.append(decoder.flush()).text + filter.flush() }
            emit(.token(id: token, text: text))
            if stopped {
                unevaluated = [token]
                finish(.stopString)
                return
            }
            if last {
                unevaluated = [token]
                finish(.maxTokens)
                return
            }
            if cached.count >= context {
                unevaluated = [token]
                finish(.contextFull)
                return
            }
            guard evaluate([token], cancelled: cancelled) else {
                finish(.cancelled)
                return
            }
        }
    }

    /// Runs `tokens` through the model in batches, appending them to the cache; leaves the last position's logits
    /// in `logits`. Returns false when cancelled between batches.
    private func evaluate(_ tokens: [Int32], cancelled: CancellationFlag) -> Bool {
        var start = 0
        tokens.withUnsafeBufferPointer { all in
            while start < all.count {
                if cancelled.isSet { return }
                let end = min(start + runner.batchSize, all.count)
                let batch = UnsafeBufferPointer(rebasing: all[start..<end])
                let outputs = end == all.count ? (batch.count - 1)..<batch.count : 0..<0
                runner.evaluate(batch, outputs: outputs, logits: logits)
                cached.append(contentsOf: batch)
                start = end
            }
        }
        guard start == tokens.count else { return false }
        haveLogits = true
        return true
    }

    private func validate(_ tokens: [Int32]) throws {
        for t in tokens where t < 0 || Int(t) >= network.vocabularySize {
            throw PureSwiftError.tokenOutOfRange(token: t, vocabularySize: network.vocabularySize)
        }
    }

    // MARK: Logits

    public func evaluateLogits(_ tokens: [Int32], rows: Range<Int>?) throws -> [[Float]] {
        lock.lock()
        defer { lock.unlock() }
        try validate(tokens)
        guard tokens.count <= runner.contextLength else {
            throw SanadError.promptTooLong(tokens: tokens.count, context: runner.contextLength)
        }
        let wanted = (rows ?? 0..<tokens.count).clamped(to: 0..<tokens.count)
        clear()
        defer { clear() }
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

    public func append(_ tokens: [Int32]) throws {
        lock.lock()
        defer { lock.unlock() }
        try validate(tokens)
        let pending = unevaluated + tokens
        guard cached.count + pending.count <= runner.contextLength else {
            throw SanadError.promptTooLong(tokens: cached.count + pending.count, context: runner.contextLength)
        }
        unevaluated = []
        _ = evaluate(pending, cancelled: CancellationFlag())
    }

    public func reset() {
        lock.lock()
        defer { lock.unlock() }
        clear()
    }

    private func clear() {
        runner.reset()
        cached = []
        unevaluated = []
        haveLogits = false
    }

    private func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}

/// A flag the consumer side sets (stream terminated) and the generation thread polls once per token.
final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// The outcome of loading a tokenizer on another thread (written there once, read after the wait).
private final class TokenizerLoad: @unchecked Sendable {
    var value: Result<Tokenizer, any Error>?
}
