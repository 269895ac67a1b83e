import Foundation
import GGUF
import SanadCore
import SanadSigning
import SanadStructured

/// What one generation did, as its events told it: everything a receipt states beyond the model and the engine.
/// `sanad generate`, the chat and the server fill one in the same way.
public struct GenerationRecord: Sendable {
    /// The text given to the tokenizer (after the chat template).
    public var promptText: String
    /// The prompt as the generation loop tokenizes it in a fresh session (BOS as the model adds it, special tokens
    /// parsed); a replay starts from these ids.
    public var promptTokens: [Int32]
    public var maxTokens: Int
    public var sampling: SamplingParameters
    public var stopStrings: [String]
    public var truncatePrompt: Bool
    /// nil without a chat template; `model` for the model's own, else the template family's name.
    public var chatTemplate: String?
    public var constraint: ReceiptConstraint?
    public var outputTokens: [Int32] = []
    public var outputText = ""
    /// Why it stopped; nil until it finished.
    public var stopReason: StopReason?
    public var stats = GenerationStats()

    /// A record of a generation about to start from `prompt` (tokenized here with `session`'s tokenizer, as the
    /// generation loop does in a fresh session).
    public init(
        prompt: String, session: any InferenceSession, parameters: GenerationParameters, chatTemplate: String?
    ) throws {
        self.init(
            prompt: prompt, promptTokens: try session.tokenize(prompt, addSpecial: true, parseSpecial: true),
            parameters: parameters, chatTemplate: chatTemplate)
    }

    public init(prompt: String, promptTokens: [Int32], parameters: GenerationParameters, chatTemplate: String?) {
        promptText = prompt
        self.promptTokens = promptTokens
        maxTokens = parameters.maxTokens
        sampling = parameters.sampling
        stopStrings = parameters.stopStrings
        truncatePrompt = parameters.truncatePrompt
        self.chatTemplate = chatTemplate
        constraint = parameters.constraint.flatMap(ReceiptConstraint.init)
    }

    /// Whether the generation ended by itself (not cancelled, not interrupted): only such a one gets a receipt.
    public var finished: Bool { stopReason.map { $0 != .cancelled } ?? false }

    public mutating func record(_ event: GenerationEvent) {
        switch event {
        case .token(let id, let text):
            outputTokens.append(id)
            outputText += text
        case .finished(let reason, let stats):
            stopReason = reason
            self.stats = stats
        }
    }
}

/// Signs receipts of the generations of one loaded model: the model file and its tokenizer are hashed once, when it
/// is made; each receipt then costs the digests of its token ids and texts, the canonical form and one Ed25519
/// signature (under a millisecond: README.md, "Receipts").
public final class ReceiptIssuer: Sendable {
    public let lib: LibCrypto
    public let key: DeviceKey
    public let model: ReceiptModel
    public let engine: ReceiptEngine
    public let sanadVersion: String
    /// Seconds hashing the model file and its tokenizer took.
    public let hashingSeconds: Double

    public convenience init(
        modelFile: URL, engine: ReceiptEngine, sanadVersion: String, key: DeviceKey, lib: LibCrypto
    ) throws {
        let start = Date()
        let model = try Self.receiptModel(file: modelFile, lib: lib)
        self.init(
            model: model, engine: engine, sanadVersion: sanadVersion, key: key, lib: lib,
            hashingSeconds: Date().timeIntervalSince(start))
    }

    /// An issuer for a model already described (hashed).
    public init(
        model: ReceiptModel, engine: ReceiptEngine, sanadVersion: String, key: DeviceKey, lib: LibCrypto,
        hashingSeconds: Double = 0
    ) {
        self.lib = lib
        self.key = key
        self.model = model
        self.engine = engine
        self.sanadVersion = sanadVersion
        self.hashingSeconds = hashingSeconds
    }

    /// The model as a receipt names it: the file's SHA-256 (read whole), its tokenizer's and chat template's.
    public static func receiptModel(file: URL, lib: LibCrypto) throws -> ReceiptModel {
        let gguf = try GGUFFile(path: file.path)
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        return ReceiptModel(
            file: file.lastPathComponent, sha256: try SHA256Digest.hex(file: file, lib: lib), bytes: size,
            architecture: gguf.architecture, tokenizerSHA256: try TokenizerDigest.sha256(gguf, lib: lib),
            chatTemplateSHA256: try TokenizerDigest.chatTemplateSHA256(gguf, lib: lib))
    }

    /// What a receipt of `record` states.
    public func facts(_ record: GenerationRecord, includeText: Bool, createdAt: Date = Date()) -> GenerationFacts {
        GenerationFacts(
            sanadVersion: sanadVersion, model: model, engine: engine, generation: record, createdAt: createdAt,
            includeText: includeText)
    }

    /// The signed receipt of a finished generation (canonical bytes, no final newline).
    public func sign(_ record: GenerationRecord, includeText: Bool) throws -> [UInt8] {
        try GenerationReceipt.sign(
            facts(record, includeText: includeText), nonce: try GenerationReceipt.newNonce(lib: lib), key: key,
            lib: lib)
    }

    /// `sign` as a JSON object, for a server response or a chat transcript (`ReceiptVerifier.verify(object:)`
    /// checks it in that form).
    public func signedObject(_ record: GenerationRecord, includeText: Bool) throws -> JSONValue {
        try StrictJSON(maximumBytes: 64 << 20, maximumDepth: 64).parse(try sign(record, includeText: includeText))
    }
}

extension ReceiptConstraint {
    /// What a receipt states of a generation's constraint: a JSON schema by its source, a GBNF grammar by its text;
    /// nil for a constraint that is neither (or a schema made without its source).
    public init?(_ constraint: any TokenConstraint) {
        if let schema = constraint as? SchemaConstraint {
            guard let source = schema.source else { return nil }
            self = .jsonSchema(source)
        } else if let grammar = constraint as? GBNFGrammar {
            self = .grammar(grammar.text)
        } else {
            return nil
        }
    }
}
