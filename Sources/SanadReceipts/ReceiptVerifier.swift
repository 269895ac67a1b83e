import Foundation
import SanadCore
import SanadSigning

/// A receipt that verified: who signed it, its digest and what it states.
public struct VerifiedReceipt: Sendable {
    public var signer: DocumentSigner
    /// SHA-256 of the receipt's canonical bytes.
    public var digest: String
    public var document: [String: JSONValue]

    public var receiptID: String { document["receiptId"]?.stringValue ?? "" }
    public var modelSHA256: String { document["model"]?["sha256"]?.stringValue ?? "" }
    public var modelFile: String { document["model"]?["file"]?.stringValue ?? "" }
    public var engineID: String { document["engine"]?["id"]?.stringValue ?? "" }
    public var engineBuild: String { document["engine"]?["build"]?.stringValue ?? "" }
    /// Why the engine that made it cannot be replayed exactly; nil when it can.
    public var notReplayable: String? { document["engine"]?["notReplayable"]?.stringValue }
    /// The context length and batch size the generation ran with (nil when the receipt states none: 0).
    public var contextLength: Int? { document["engine"]?["contextLength"]?.intValue.flatMap { $0 > 0 ? $0 : nil } }
    public var batchSize: Int? { document["engine"]?["batchSize"]?.intValue.flatMap { $0 > 0 ? $0 : nil } }
    /// The prompt's token ids (only in a receipt made with `--receipt-include-text`).
    public var promptTokens: [Int32]? { Self.ids(document["prompt"]?["tokenIds"]) }
    public var outputTokens: [Int32]? { Self.ids(document["output"]?["tokenIds"]) }
    public var outputTokenCount: Int { document["output"]?["tokens"]?.intValue ?? 0 }
    /// The JSON Schema the output was constrained by, when the receipt includes it.
    public var schema: JSONValue? { document["parameters"]?["constraint"]?["schema"] }
    public var constraintKind: String? { document["parameters"]?["constraint"]?["kind"]?.stringValue }

    /// The generation parameters the receipt states (without the constraint, which the caller compiles).
    public func parameters() throws -> (maxTokens: Int, sampling: SamplingParameters, stops: [String], truncate: Bool) {
        guard case .object(let p)? = document["parameters"], case .object(let s)? = p["sampling"],
            let maxTokens = p["maxTokens"]?.intValue, let seedText = s["seed"]?.stringValue,
            let seed = UInt64(seedText), let temperature = s["temperature"]?.doubleValue,
            let topK = s["topK"]?.intValue, let topP = s["topP"]?.doubleValue, let minP = s["minP"]?.doubleValue,
            let repetition = s["repetitionPenalty"]?.doubleValue, let window = s["repetitionWindow"]?.intValue,
            let frequency = s["frequencyPenalty"]?.doubleValue, let presence = s["presencePenalty"]?.doubleValue,
            let stops = p["stopStrings"]?.arrayValue, let truncate = p["truncatePrompt"]?.boolValue
        else { throw SignatureProblem(reason: "malformed", detail: "the receipt's parameters are incomplete") }
        let sampling = SamplingParameters(
            temperature: Float(temperature), topK: topK, topP: Float(topP), minP: Float(minP),
            repetitionPenalty: Float(repetition), repetitionWindow: window, frequencyPenalty: Float(frequency),
            presencePenalty: Float(presence), seed: seed)
        return (maxTokens, sampling, stops.compactMap(\.stringValue), truncate)
    }

    static func ids(_ value: JSONValue?) -> [Int32]? {
        guard let items = value?.arrayValue else { return nil }
        var out: [Int32] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let v = item.intValue, let id = Int32(exactly: v) else { return nil }
            out.append(id)
        }
        return out
    }
}

/// Offline verification of a receipt: the bytes must be its canonical form (one optional final newline), the
/// fields present with their types, the text and token ids it includes must match its digests, the Ed25519
/// signature must verify for the embedded key (whose id must match), and with `trustedKeys` (public keys, hex) the
/// key must be one of them. Throws `SignatureProblem` (`malformed`, `not-canonical`, `inconsistent`,
/// `untrusted-key`, `bad-signature`).
public enum ReceiptVerifier {
    public static func verify(_ input: [UInt8], lib: LibCrypto, trustedKeys: Set<String>? = nil) throws
        -> VerifiedReceipt
    {
        var bytes = input
        if bytes.last == 10 { bytes.removeLast() }
        let value: JSONValue
        do { value = try StrictJSON(maximumBytes: 64 << 20, maximumDepth: 64).parse(bytes) } catch {
            throw SignatureProblem(reason: "malformed", detail: "not JSON: \(error)")
        }
        guard case .object(let document) = value else {
            throw SignatureProblem(reason: "malformed", detail: "a receipt is a JSON object")
        }
        guard document["format"]?.stringValue == GenerationReceipt.format,
            document["version"]?.intValue == GenerationReceipt.version
        else {
            throw SignatureProblem(
                reason: "malformed", detail: "not a \(GenerationReceipt.format) version \(GenerationReceipt.version)")
        }
        guard SignedDocument.isCanonical(value, bytes: bytes) else {
            throw SignatureProblem(
                reason: "not-canonical", detail: "the bytes are not the receipt's RFC 8785 canonical form")
        }
        let signer = try SignedDocument.signer(of: document, lib: lib)
        for (field, kind) in requiredFields where document[field]?.kindName != kind {
            throw SignatureProblem(reason: "malformed", detail: "\"\(field)\" must be \(kind)", keyID: signer.keyID)
        }
        if let trustedKeys, !trustedKeys.contains(signer.publicKeyHex), !trustedKeys.contains(signer.keyID) {
            throw SignatureProblem(
                reason: "untrusted-key",
                detail: "it is signed by device key \(signer.keyID) (public key \(signer.publicKeyHex)), which is not "
                    + "one of the \(trustedKeys.count) trusted keys; if you trust that device, add the line 'sanad "
                    + "keys export-public' prints there to the list",
                keyID: signer.keyID)
        }
        try SignedDocument.checkSignature(document, signer: signer, lib: lib)
        let receipt = VerifiedReceipt(
            signer: signer, digest: try SHA256Digest.hex(bytes, lib: lib), document: document)
        try checkIncluded(document, "prompt", signer: signer, lib: lib)
        try checkIncluded(document, "output", signer: signer, lib: lib)
        return receipt
    }

    /// The text and token ids a receipt includes must be the ones its digests name.
    static func checkIncluded(_ document: [String: JSONValue], _ part: String, signer: DocumentSigner, lib: LibCrypto)
        throws
    {
        guard case .object(let section)? = document[part] else { return }
        func inconsistent(_ what: String) -> SignatureProblem {
            SignatureProblem(
                reason: "inconsistent", detail: "\(part).\(what) does not match its digest", keyID: signer.keyID)
        }
        if let text = section["text"] {
            guard let text = text.stringValue,
                try GenerationReceipt.textSHA256(text, lib: lib) == section["textSHA256"]?.stringValue
            else { throw inconsistent("text") }
        }
        if let value = section["tokenIds"] {
            guard let ids = VerifiedReceipt.ids(value), ids.count == section["tokens"]?.intValue,
                try GenerationReceipt.tokenIDsSHA256(ids, lib: lib) == section["tokenIdsSHA256"]?.stringValue
            else { throw inconsistent("tokenIds") }
        }
    }

    static let requiredFields: [(String, String)] = [
        ("receiptId", "a string"), ("sanad", "an object"), ("model", "an object"), ("engine", "an object"),
        ("parameters", "an object"), ("prompt", "an object"), ("output", "an object"), ("timing", "an object"),
        ("createdAt", "a string"), ("textIncluded", "a boolean"),
    ]

    /// A receipt held as a JSON object (in a server response, a chat transcript): verified in its canonical form,
    /// which is what was signed; every check of `verify` but the byte layout of a file applies.
    public static func verify(object: JSONValue, lib: LibCrypto, trustedKeys: Set<String>? = nil) throws
        -> VerifiedReceipt
    {
        let bytes: [UInt8]
        do { bytes = try CanonicalJSON.bytes(object) } catch {
            throw SignatureProblem(reason: "malformed", detail: "\(error)")
        }
        return try verify(bytes, lib: lib, trustedKeys: trustedKeys)
    }

    /// Trusted keys, one per line: the first word of each line, a public key (64 hex digits) or a key id (16 hex
    /// digits, the start of the public key's SHA-256); blank lines and `#` comments are skipped (`sanad keys
    /// export-public` writes such lines, the retired keys' too).
    public static func trustedKeys(_ text: String) throws -> Set<String> {
        var keys: Set<String> = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let word = String(trimmed.prefix { !$0.isWhitespace })
            guard let key = Hex.decode(word), key.count == 32 || key.count == 8 else {
                throw SignatureProblem(
                    reason: "malformed",
                    detail: "line \(index + 1): '\(word)' is not a public key (64 lower-case hex digits) or a key id "
                        + "(16)")
            }
            keys.insert(word)
        }
        return keys
    }
}

/// How a replay compares with the receipt: the same token ids, or the first that differs.
public enum ReplayOutcome: Sendable, Equatable {
    case identical(tokens: Int)
    /// At `index` the receipt has `expected` and the replay `got` (nil: that side had ended).
    case differs(index: Int, expected: Int32?, got: Int32?)

    public static func compare(expected: [Int32], got: [Int32]) -> ReplayOutcome {
        for i in 0..<max(expected.count, got.count) {
            let e = i < expected.count ? expected[i] : nil
            let g = i < got.count ? got[i] : nil
            if e != g { return .differs(index: i, expected: e, got: g) }
        }
        return .identical(tokens: expected.count)
    }
}

/// Finding a model file by its SHA-256.
public enum ModelLookup {
    /// The `.gguf` file of `directory` whose SHA-256 is `sha256`, trying the file named `hint` first (the others
    /// are hashed only when it is not the one); nil when none is. `looked` counts the files hashed.
    public static func find(sha256: String, hint: String, in directory: URL, lib: LibCrypto) throws
        -> (file: URL?, looked: Int)
    {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".gguf") }.sorted()
        let ordered = names.filter { $0 == hint } + names.filter { $0 != hint }
        var looked = 0
        for name in ordered {
            let file = directory.appendingPathComponent(name)
            looked += 1
            if (try? SHA256Digest.hex(file: file, lib: lib)) == sha256 { return (file, looked) }
        }
        return (nil, looked)
    }
}

/// Where a file keeps its receipts: it is one (`sanad generate --receipt`, `/receipt FILE`), or it holds them as
/// JSON objects: a server response's `receipt`, a saved chat transcript's messages' `receipt`.
public enum ReceiptContainer: Sendable, Equatable {
    /// The bytes are one receipt (checked byte for byte).
    case file
    /// The receipts a response or transcript holds, each with what names it (`response`, `message <id>`).
    case embedded([EmbeddedReceipt])

    /// What `bytes` are; anything that is not a response or a transcript holding receipts is read as a receipt
    /// file (whose verification then says what is wrong with it).
    public static func of(_ bytes: [UInt8]) -> ReceiptContainer {
        guard let value = try? StrictJSON(maximumBytes: 64 << 20, maximumDepth: 64).parse(bytes) else { return .file }
        switch value {
        case .object(let object) where object["format"] == nil:
            guard let receipt = object["receipt"], receipt != .null else { return .file }
            return .embedded([EmbeddedReceipt(label: "response", receipt: receipt)])
        case .array(let entries):
            return .embedded(
                entries.compactMap { entry in
                    guard let receipt = entry["receipt"], receipt != .null else { return nil }
                    return EmbeddedReceipt(
                        label: "message \(entry["id"]?.stringValue ?? "?")", receipt: receipt,
                        content: entry["content"]?.stringValue)
                })
        default:
            return .file
        }
    }
}

/// A receipt held in a response or a transcript.
public struct EmbeddedReceipt: Sendable, Equatable {
    public var label: String
    public var receipt: JSONValue
    /// The transcript message's text (a receipt with text must state it, surrounding whitespace aside).
    public var content: String?

    public init(label: String, receipt: JSONValue, content: String? = nil) {
        self.label = label
        self.receipt = receipt
        self.content = content
    }
}
