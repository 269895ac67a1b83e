import Foundation
import GGUF
import SanadCore

/// What `sanad models` and the memory estimate need to know about a GGUF model, read from its metadata alone.
public struct ModelSummary: Sendable, Equatable {
    public var fileName: String
    public var path: String
    public var architecture: String
    public var name: String?
    public var parameterCount: Int
    public var fileSize: Int
    public var tensorBytes: Int
    /// Tensor type → number of tensors, most common first (`Q4_1×210, F32×61, Q8_0×1`).
    public var quantizationMix: [(type: String, count: Int)]
    public var trainingContextLength: Int?
    public var layerCount: Int?
    public var embeddingLength: Int?
    public var headCount: Int?
    public var kvHeadCount: Int?
    public var keyLength: Int?
    public var valueLength: Int?
    public var vocabularySize: Int?
    /// The chat template family, or nil (`chatTemplatePresent` says whether there is an unknown one).
    public var chatTemplate: ChatTemplate?
    public var chatTemplatePresent: Bool

    public static func == (a: ModelSummary, b: ModelSummary) -> Bool {
        a.path == b.path && a.parameterCount == b.parameterCount && a.tensorBytes == b.tensorBytes
    }

    /// The summary of `file`; throws `GGUFError.implausible`/`.wrongKeyType` when a hyperparameter is outside
    /// the range real models use (`ModelValidation.validateHyperparameters`), so that no estimate is made from one.
    public init(file: GGUFFile) throws {
        try ModelValidation.validateHyperparameters(file)
        let arch = file.architecture ?? "unknown"
        func key(_ suffix: String) -> Int? { file.int("\(arch).\(suffix)") }
        fileName = URL(fileURLWithPath: file.path).lastPathComponent
        path = file.path
        architecture = arch
        name = file.string("general.name")
        parameterCount = file.parameterCount
        fileSize = file.mapping.count
        tensorBytes = file.tensorBytes
        var counts: [String: Int] = [:]
        for t in file.tensors { counts[t.type.description, default: 0] += 1 }
        quantizationMix = counts.map { (type: $0.key, count: $0.value) }.sorted(by: Self.mixOrder)
        trainingContextLength = key("context_length")
        layerCount = key("block_count")
        let embedding = key("embedding_length")
        let heads = key("attention.head_count")
        embeddingLength = embedding
        headCount = heads
        kvHeadCount = key("attention.head_count_kv") ?? heads
        var headDim: Int?
        if let embedding, let heads, heads > 0 { headDim = embedding / heads }
        keyLength = key("attention.key_length") ?? headDim
        valueLength = key("attention.value_length") ?? headDim
        vocabularySize = file.metadata["tokenizer.ggml.tokens"]?.arrayValue?.count
        let jinja = file.string("tokenizer.chat_template")
        chatTemplatePresent = jinja != nil
        chatTemplate = jinja.flatMap(ChatTemplate.detect)
    }

    static func mixOrder(_ a: (type: String, count: Int), _ b: (type: String, count: Int)) -> Bool {
        a.count > b.count || (a.count == b.count && a.type < b.type)
    }

    /// `Q4_1×210, F32×61`.
    public var quantizationText: String {
        quantizationMix.map { "\($0.type)×\($0.count)" }.joined(separator: ", ")
    }

    /// `135M`, `1.2B` as llama-bench prints parameter counts.
    public var parameterText: String { formatParameterCount(parameterCount) }

    /// `chatml`, `unknown`, or `none`.
    public var chatTemplateText: String {
        chatTemplate?.rawValue ?? (chatTemplatePresent ? "unknown" : "none")
    }
}

/// `134.52 M`-style parameter counts (llama-bench prints `134.52 M`).
public func formatParameterCount(_ n: Int) -> String {
    if n >= 1_000_000_000 { return String(format: "%.2f B", Double(n) / 1e9) }
    return String(format: "%.2f M", Double(n) / 1e6)
}

/// Memory a model needs before it is loaded: weights + KV cache + scratch.
public struct MemoryEstimate: Sendable, Equatable {
    public var weightBytes: Int
    public var kvCacheBytes: Int
    public var scratchBytes: Int
    /// What the chosen engine adds (see `InferenceBackend.additionalMemory`), if anything.
    public var engine: EngineMemory?
    public var contextLength: Int

    public var totalBytes: Int { saturatingSum(weightBytes, kvCacheBytes, scratchBytes, engine?.bytes ?? 0) }

    /// KV cache = context × layers × KV heads × (a key row of `cacheTypeK` + a value row of `cacheTypeV`): 2 bytes a
    /// value for F16 (every engine's default), 34 per 32 for Q8_0 (`--cache-type-k/-v`); scratch = activations and
    /// logits of one batch. Products saturate at `Int.max` instead of trapping, so an absurd context or model gives
    /// an estimate that no budget fits.
    public init(
        model: ModelSummary, contextLength: Int, batchSize: Int = 512, cacheTypeK: GGMLType = .f16,
        cacheTypeV: GGMLType = .f16, engine: EngineMemory? = nil
    ) {
        weightBytes = model.tensorBytes
        self.engine = engine
        self.contextLength = contextLength
        let layers = model.layerCount ?? 0
        let kvHeads = model.kvHeadCount ?? 0
        let rowBytes = saturatingSum(
            cacheTypeK.bytes(count: min(model.keyLength ?? 0, 1 << 30)),
            cacheTypeV.bytes(count: min(model.valueLength ?? 0, 1 << 30)))
        kvCacheBytes = saturatingProduct(contextLength, layers, kvHeads, rowBytes)
        let embedding = model.embeddingLength ?? 0
        let vocab = model.vocabularySize ?? 0
        let batch = min(batchSize, contextLength)
        // Per token of a batch: ~8 activation vectors of the embedding width plus the FFN width (~4×), one
        // attention score row over the context per head; plus one vocabulary-sized logits row.
        let heads = model.headCount ?? 0
        let perToken = saturatingSum(saturatingProduct(12, embedding), saturatingProduct(heads, contextLength))
        scratchBytes = saturatingSum(saturatingProduct(batch, perToken, 4), saturatingProduct(vocab, 4, 2))
    }

    /// One line: `weights 69 MiB + KV cache 45 MiB + scratch 12 MiB = 126 MiB at ctx 2048`, with the engine's part
    /// before the total when there is one (`+ BLAS F32 weights (cache-weights) 418 MiB`).
    public var text: String {
        let engineText = engine.map { " + \($0.label) \(formatMiB($0.bytes))" } ?? ""
        return "weights \(formatMiB(weightBytes)) + KV cache \(formatMiB(kvCacheBytes)) + scratch "
            + "\(formatMiB(scratchBytes))\(engineText) = \(formatMiB(totalBytes)) at ctx \(contextLength)"
    }

    /// Throws `insufficientMemory` with the numbers and the nearest tier that fits when over `config`'s budget.
    public func check(against config: HostConfiguration, allTiers: [HostConfiguration]) throws {
        let budget = saturatingProduct(config.memoryBudgetMiB, 1_048_576)
        guard totalBytes > budget else { return }
        let fitting = allTiers.sorted { $0.memoryBudgetMiB < $1.memoryBudgetMiB }
            .first { saturatingProduct($0.memoryBudgetMiB, 1_048_576) >= totalBytes }
        let suggestion =
            fitting.map {
                "tier '\($0.tier)' (budget \($0.memoryBudgetMiB) MiB) fits: pass --tier \($0.tier), or lower the context (-c)"
            }
            ?? "no tier's budget fits; lower the context (-c) or use a smaller model"
        throw SanadError.insufficientMemory(
            needed: totalBytes, budget: budget, tier: config.tier, suggestion: "\(text); \(suggestion)")
    }
}

/// The product of non-negative `values`, `Int.max` when it does not fit (a negative factor counts as 0).
public func saturatingProduct(_ values: Int...) -> Int {
    var product = 1
    for v in values {
        guard v > 0 else { return 0 }
        let (p, overflow) = product.multipliedReportingOverflow(by: v)
        if overflow { return Int.max }
        product = p
    }
    return product
}

/// The sum of non-negative `values`, `Int.max` when it does not fit (a negative term counts as 0).
public func saturatingSum(_ values: Int...) -> Int {
    var sum = 0
    for v in values where v > 0 {
        let (s, overflow) = sum.addingReportingOverflow(v)
        if overflow { return Int.max }
        sum = s
    }
    return sum
}
