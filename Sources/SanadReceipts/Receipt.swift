import Foundation
import SanadCore
import SanadSigning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The model a receipt names: its file and what identifies its computation and its tokens.
public struct ReceiptModel: Sendable, Equatable {
    /// The file name (a hint for finding it again; the digest is what counts).
    public var file: String
    /// SHA-256 of the whole file.
    public var sha256: String
    public var bytes: Int
    public var architecture: String?
    /// `TokenizerDigest.sha256`.
    public var tokenizerSHA256: String
    /// SHA-256 of the model's own chat template, nil when it has none.
    public var chatTemplateSHA256: String?

    public init(
        file: String, sha256: String, bytes: Int, architecture: String?, tokenizerSHA256: String,
        chatTemplateSHA256: String?
    ) {
        self.file = file
        self.sha256 = sha256
        self.bytes = bytes
        self.architecture = architecture
        self.tokenizerSHA256 = tokenizerSHA256
        self.chatTemplateSHA256 = chatTemplateSHA256
    }
}

/// The engine that computed a generation and whether another machine can compute it again bit for bit.
public struct ReceiptEngine: Sendable, Equatable {
    /// `pure-swift`, `blas`, `llama`, `openai`.
    public var id: String
    /// The build that computed: the pure-Swift kernel build (`kernels avx512vnni`), the libllama build …
    public var build: String
    /// Why a replay cannot be exact (nil: the engine is deterministic and bit-exact on every CPU).
    public var notReplayable: String?
    public var threads: Int
    public var batchSize: Int
    public var contextLength: Int

    public init(
        id: String, build: String, notReplayable: String?, threads: Int, batchSize: Int, contextLength: Int
    ) {
        self.id = id
        self.build = build
        self.notReplayable = notReplayable
        self.threads = threads
        self.batchSize = batchSize
        self.contextLength = contextLength
    }
}

/// A constraint on the output, as a receipt names it.
public enum ReceiptConstraint: Sendable, Equatable {
    /// A JSON Schema (`--json-schema`).
    case jsonSchema(JSONValue)
    /// A GBNF grammar (`--grammar`).
    case grammar(String)
}

/// Everything a receipt states about one generation (`GenerationReceipt.body` writes it): who computed it and the
/// generation's record.
public struct GenerationFacts: Sendable {
    public var sanadVersion: String
    public var model: ReceiptModel
    public var engine: ReceiptEngine
    /// The prompt, the parameters and the output.
    public var generation: GenerationRecord
    public var createdAt: Date
    /// Whether prompt and output text and token ids (and a schema) are written, not only their digests.
    public var includeText: Bool

    public init(
        sanadVersion: String, model: ReceiptModel, engine: ReceiptEngine, generation: GenerationRecord,
        createdAt: Date, includeText: Bool
    ) {
        self.sanadVersion = sanadVersion
        self.model = model
        self.engine = engine
        self.generation = generation
        self.createdAt = createdAt
        self.includeText = includeText
    }
}

/// The signed generation receipt, format `sanad-generation-receipt` version 1 (README.md, "Receipts", documents
/// every field). Its bytes are its RFC 8785 canonical form and one final newline, signed by the device key with the
/// scheme of credit records (`SignedDocument`).
public enum GenerationReceipt {
    public static let format = "sanad-generation-receipt"
    public static let version = 1

    /// SHA-256 of token ids as their canonical JSON array (`[1,2,3]`).
    public static func tokenIDsSHA256(_ ids: [Int32], lib: LibCrypto) throws -> String {
        try SHA256Digest.hex(try CanonicalJSON.bytes(idArray(ids)), lib: lib)
    }

    /// SHA-256 of a text's UTF-8 bytes.
    public static func textSHA256(_ text: String, lib: LibCrypto) throws -> String {
        try SHA256Digest.hex(Array(text.utf8), lib: lib)
    }

    /// The SHA-256 a receipt gives a constraint: of a schema's canonical JSON, of a grammar's UTF-8 text.
    public static func constraintSHA256(_ constraint: ReceiptConstraint, lib: LibCrypto) throws -> String {
        switch constraint {
        case .jsonSchema(let schema): return try SHA256Digest.hex(try CanonicalJSON.bytes(schema), lib: lib)
        case .grammar(let text): return try textSHA256(text, lib: lib)
        }
    }

    /// The unsigned receipt of `facts`; `receiptID` names it (`<UTC time>-<12 hex>`).
    public static func body(_ facts: GenerationFacts, receiptID: String, lib: LibCrypto) throws -> [String: JSONValue] {
        func number(_ v: Int) -> JSONValue { .number(Double(v)) }
        func float(_ v: Float) -> JSONValue { .number(Double(v)) }
        let g = facts.generation
        let s = g.sampling
        var constraint: JSONValue = .null
        if let c = g.constraint {
            var object: [String: JSONValue] = [
                "sha256": .string(try constraintSHA256(c, lib: lib)),
                "kind": .string(c.kind),
            ]
            if facts.includeText {
                switch c {
                case .jsonSchema(let schema): object["schema"] = schema
                case .grammar(let text): object["grammar"] = .string(text)
                }
            }
            constraint = .object(object)
        }
        var prompt: [String: JSONValue] = [
            "tokens": number(g.promptTokens.count),
            "tokenIdsSHA256": .string(try tokenIDsSHA256(g.promptTokens, lib: lib)),
            "textSHA256": .string(try textSHA256(g.promptText, lib: lib)),
        ]
        var output: [String: JSONValue] = [
            "tokens": number(g.outputTokens.count),
            "tokenIdsSHA256": .string(try tokenIDsSHA256(g.outputTokens, lib: lib)),
            "textSHA256": .string(try textSHA256(g.outputText, lib: lib)),
            "stop": .string((g.stopReason ?? .cancelled).rawValue),
        ]
        if facts.includeText {
            prompt["text"] = .string(g.promptText)
            prompt["tokenIds"] = idArray(g.promptTokens)
            output["text"] = .string(g.outputText)
            output["tokenIds"] = idArray(g.outputTokens)
        }
        let m = facts.model
        let e = facts.engine
        let st = g.stats
        return [
            "format": .string(format), "version": number(version), "receiptId": .string(receiptID),
            "sanad": .object(["version": .string(facts.sanadVersion)]),
            "model": .object([
                "file": .string(m.file), "sha256": .string(m.sha256), "bytes": number(m.bytes),
                "architecture": m.architecture.map(JSONValue.string) ?? .null,
                "tokenizerSHA256": .string(m.tokenizerSHA256),
                "chatTemplateSHA256": m.chatTemplateSHA256.map(JSONValue.string) ?? .null,
            ]),
            "engine": .object([
                "id": .string(e.id), "build": .string(e.build), "deterministic": .bool(e.notReplayable == nil),
                "notReplayable": e.notReplayable.map(JSONValue.string) ?? .null, "threads": number(e.threads),
                "batchSize": number(e.batchSize), "contextLength": number(e.contextLength),
            ]),
            "parameters": .object([
                "maxTokens": number(g.maxTokens),
                "sampling": .object([
                    "temperature": float(s.temperature), "topK": number(s.topK), "topP": float(s.topP),
                    "minP": float(s.minP), "repetitionPenalty": float(s.repetitionPenalty),
                    "repetitionWindow": number(s.repetitionWindow), "frequencyPenalty": float(s.frequencyPenalty),
                    "presencePenalty": float(s.presencePenalty),
                    // A string: a 64-bit seed does not fit a JSON number exactly.
                    "seed": .string(String(s.seed)),
                ]),
                "stopStrings": .array(g.stopStrings.map(JSONValue.string)),
                "truncatePrompt": .bool(g.truncatePrompt),
                "chatTemplate": g.chatTemplate.map(JSONValue.string) ?? .null,
                "constraint": constraint,
            ]),
            "prompt": .object(prompt),
            "output": .object(output),
            "timing": .object([
                "promptSeconds": .number(st.promptSeconds), "generationSeconds": .number(st.generationSeconds),
                "promptTokensPerSecond": .number(st.promptTokensPerSecond),
                "generationTokensPerSecond": .number(st.generationTokensPerSecond),
            ]),
            "textIncluded": .bool(facts.includeText),
            "createdAt": .string(isoTime(facts.createdAt)),
        ]
    }

    /// The signed receipt's canonical bytes (without the final newline a file gets); `nonce` (6 random bytes,
    /// `newNonce`) ends its id.
    public static func sign(_ facts: GenerationFacts, nonce: [UInt8], key: DeviceKey, lib: LibCrypto) throws
        -> [UInt8]
    {
        let id = isoTime(facts.createdAt).filter { $0 != "-" && $0 != ":" } + "-" + Hex.encode(nonce)
        return try SignedDocument.sign(try body(facts, receiptID: id, lib: lib), key: key, lib: lib)
    }

    /// The random end of a receipt id (`<UTC time>-<12 hex>`), drawn when a generation starts.
    public static func newNonce(lib: LibCrypto) throws -> [UInt8] { try lib.random(6) }

    static func idArray(_ ids: [Int32]) -> JSONValue { .array(ids.map { .number(Double($0)) }) }

    /// `YYYY-MM-DDTHH:MM:SSZ` (gmtime_r: no formatter to build for one receipt).
    public static func isoTime(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var t = tm()
        gmtime_r(&seconds, &t)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min,
            t.tm_sec)
    }
}

extension ReceiptConstraint {
    /// `json-schema` or `gbnf`.
    public var kind: String {
        switch self {
        case .jsonSchema: return "json-schema"
        case .grammar: return "gbnf"
        }
    }
}
