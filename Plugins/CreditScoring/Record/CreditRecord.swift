import Foundation
import SanadCore
import SanadSigning

/// The model a result names: its id and the SHA-256 of its weights file (nil for the deterministic method alone).
public struct ModelIdentity: Sendable, Equatable {
    public var id: String
    public var weightsSHA256: String

    public init(id: String, weightsSHA256: String) {
        self.id = id
        self.weightsSHA256 = weightsSHA256
    }

    /// Hashes a (large) weights file 1 MiB at a time.
    public static func of(file: URL, lib: LibCrypto) throws -> ModelIdentity {
        do {
            return ModelIdentity(id: file.lastPathComponent, weightsSHA256: try SHA256Digest.hex(file: file, lib: lib))
        } catch SigningError.io {
            throw CreditError.io("cannot read the model file \(file.path)")
        }
    }
}

/// The signed credit record, format `sanad-credit-record` version 1 (README.md documents every field). Its bytes
/// are its RFC 8785 canonical form; the signature covers the canonical form of the record without `signature`.
public enum CreditRecord {
    public static let format = "sanad-credit-record"
    /// 2 adds `analyzer`; verifiers read 1 and 2.
    public static let version = 2

    /// The unsigned record of an analysis.
    public static func body(
        _ r: AnalysisResult, inputSHA256: String, model: ModelIdentity?, createdAt: Date, recordID: String,
        lib: LibCrypto
    ) throws -> [String: JSONValue] {
        let meDigest = try SHA256Digest.hex(
            Array(r.settings.reader.me.map { $0.lowercased() }.sorted().joined(separator: "\n").utf8), lib: lib)
        func number(_ v: Int) -> JSONValue { .number(Double(v)) }
        return [
            "format": .string(format), "version": number(version), "recordId": .string(recordID),
            "method": .string(r.method),
            // What computed the record: the formulas' version and the lexicon's digest (the model, when one ran,
            // is `model` with its weights' digest); all signed with the input digest.
            "analyzer": .object([
                "formulas": .string(TraitModel.method), "lexiconSHA256": .string(try Lexicon.digest(lib: lib)),
            ]),
            "model": model.map { .object(["id": .string($0.id), "weightsSHA256": .string($0.weightsSHA256)]) } ?? .null,
            "input": .object([
                "sha256": .string(inputSHA256), "messages": number(r.input.messages),
                "skipped": number(r.input.skipped), "format": .string(r.input.format),
            ]),
            "settings": .object([
                "scope": .string(r.settings.scope.rawValue), "dateOrder": .string(r.settings.reader.dateOrder.rawValue),
                "skipBad": .bool(r.settings.reader.skipBad), "meNamesSHA256": .string(meDigest),
                "contactsSHA256": r.settings.contacts.isEmpty
                    ? .null
                    : .string(
                        try SHA256Digest.hex(
                            Array(
                                r.settings.contacts.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)" }
                                    .joined(separator: "\n").utf8), lib: lib)),
            ]),
            "traits": .object([
                "openness": .number(r.traits.openness), "conscientiousness": .number(r.traits.conscientiousness),
                "extraversion": .number(r.traits.extraversion), "agreeableness": .number(r.traits.agreeableness),
                "neuroticism": .number(r.traits.neuroticism),
            ]),
            "trustworthiness": number(r.trustworthiness),
            "explanations": .array(
                r.explanations.map {
                    .object([
                        "feature": .string($0.feature), "value": .number($0.value), "effect": .string($0.effect),
                        "messageIds": .array($0.messageIds.map(JSONValue.string)),
                    ])
                }),
            "lovedOnes": .array(
                r.lovedOnes.map {
                    .object([
                        "contact": .string($0.pseudonym), "label": .string($0.label),
                        "explanation": .string($0.explanation), "signal": .string($0.signal),
                        "confidence": .string($0.confidence), "messageIds": .array($0.messageIDs.map(JSONValue.string)),
                    ])
                }),
            "prioritisedMessageIds": .array(r.prioritised.map(JSONValue.string)),
            "consent": r.settings.consent?.json ?? .null,
            "counts": .object(r.counts.mapValues { number($0) }),
            "createdAt": .string(CivilTime.isoString(Int64(createdAt.timeIntervalSince1970.rounded(.down)))),
        ]
    }

    /// `body` with `device` and `signature` added, as canonical bytes (the device's one signing scheme,
    /// `SignedDocument`).
    public static func sign(_ body: [String: JSONValue], key: DeviceKey, lib: LibCrypto) throws -> [UInt8] {
        try SignedDocument.sign(body, key: key, lib: lib)
    }
}

/// A record that verified: who signed it and its digest.
public struct VerifiedRecord: Sendable, Equatable {
    public var recordID: String
    public var keyID: String
    public var publicKey: String
    /// SHA-256 of the record's canonical bytes.
    public var digest: String
    public var trustworthiness: Int
    public var createdAt: String
    public var record: JSONValue
}

/// Why a record was refused (`reason` is a short, content-free word for logs).
public struct RecordRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// `malformed`, `not-canonical`, `bad-signature`, `unknown-key`, `replay`.
    public var reason: String
    public var detail: String
    public var keyID: String?
    public var digest: String?

    public init(reason: String, detail: String, keyID: String? = nil, digest: String? = nil) {
        self.reason = reason
        self.detail = detail
        self.keyID = keyID
        self.digest = digest
    }

    public var description: String { "record rejected (\(reason)): \(detail)" }
}

/// Offline verification: the bytes must be the record's canonical form (one optional final newline), every
/// required field present with its type, and the Ed25519 signature valid for the embedded public key, whose id
/// must match. With `registeredKeys` (the receiving side), the key must also be one of them (checked before the
/// signature, so an unknown key is reported as such).
public enum RecordVerifier {
    public static func verify(_ input: [UInt8], lib: LibCrypto, registeredKeys: Set<String>? = nil) throws
        -> VerifiedRecord
    {
        var bytes = input
        if bytes.last == 10 { bytes.removeLast() }
        let digest = try SHA256Digest.hex(bytes, lib: lib)
        func reject(_ reason: String, _ detail: String, key: String? = nil) -> RecordRejection {
            RecordRejection(reason: reason, detail: detail, keyID: key, digest: digest)
        }
        let value: JSONValue
        do { value = try StrictJSON(maximumBytes: 1 << 20, maximumDepth: 8).parse(bytes) } catch {
            throw reject("malformed", "not JSON: \(error)")
        }
        guard case .object(let record) = value else { throw reject("malformed", "a record is a JSON object") }
        guard record["format"]?.stringValue == CreditRecord.format, let version = record["version"]?.intValue,
            (1...CreditRecord.version).contains(version)
        else { throw reject("malformed", "not a \(CreditRecord.format) version 1 or \(CreditRecord.version)") }
        if version >= 2 {
            guard case .object(let analyzer)? = record["analyzer"], analyzer["formulas"]?.stringValue != nil,
                analyzer["lexiconSHA256"]?.stringValue?.count == 64
            else { throw reject("malformed", "no analyzer {formulas, lexiconSHA256} (version 2)") }
        }
        let signer = try signer(of: value, object: record, bytes: bytes, noun: "record", lib: lib) {
            reject($0, $1, key: $2)
        }
        let keyID = signer.keyID
        for (field, kind) in requiredFields where record[field]?.kindName != kind {
            throw reject("malformed", "\"\(field)\" must be \(kind)", key: keyID)
        }
        guard let recordID = record["recordId"]?.stringValue, let score = record["trustworthiness"]?.intValue,
            (0...100).contains(score), let createdAt = record["createdAt"]?.stringValue
        else { throw reject("malformed", "recordId, trustworthiness 0–100 and createdAt are required", key: keyID) }
        try checkSignature(record, signer: signer, noun: "record", registeredKeys: registeredKeys, lib: lib) {
            reject($0, $1, key: $2)
        }
        return VerifiedRecord(
            recordID: recordID, keyID: keyID, publicKey: signer.publicKeyHex, digest: digest, trustworthiness: score,
            createdAt: createdAt, record: value)
    }

    /// The signer of a signed document (`noun`: record, request) whose bytes are its canonical form; refusals are
    /// made by `reject(reason, detail, keyID)`.
    static func signer(
        of value: JSONValue, object: [String: JSONValue], bytes: [UInt8], noun: String, lib: LibCrypto,
        reject: (String, String, String?) -> RecordRejection
    ) throws -> DocumentSigner {
        guard SignedDocument.isCanonical(value, bytes: bytes) else {
            throw reject("not-canonical", "the bytes are not the \(noun)'s RFC 8785 canonical form", nil)
        }
        do { return try SignedDocument.signer(of: object, lib: lib) } catch let problem as SignatureProblem {
            throw reject(problem.reason, problem.detail, problem.keyID)
        }
    }

    /// The signer's key must be one of `registeredKeys` (when given; checked first, so an unknown key is reported as
    /// such) and its signature must match `object`.
    static func checkSignature(
        _ object: [String: JSONValue], signer: DocumentSigner, noun: String, registeredKeys: Set<String>?,
        lib: LibCrypto, reject: (String, String, String?) -> RecordRejection
    ) throws {
        if let registeredKeys, !registeredKeys.contains(signer.publicKeyHex) {
            throw reject("unknown-key", "the device key \(signer.keyID) is not registered", signer.keyID)
        }
        do { try SignedDocument.checkSignature(object, signer: signer, lib: lib) } catch is SignatureProblem {
            throw reject("bad-signature", "the Ed25519 signature does not match the \(noun)", signer.keyID)
        }
    }

    static let requiredFields: [(String, String)] = [
        ("recordId", "a string"), ("method", "a string"), ("input", "an object"), ("settings", "an object"),
        ("traits", "an object"), ("trustworthiness", "a number"), ("explanations", "an array"),
        ("counts", "an object"), ("createdAt", "a string"), ("lovedOnes", "an array"),
    ]
}
