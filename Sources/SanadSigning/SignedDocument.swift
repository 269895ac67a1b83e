import Foundation
import SanadCore

/// Who signed a document: the `device` object every signed document carries.
public struct DocumentSigner: Sendable, Equatable {
    /// The first 16 hex digits of SHA-256(public key).
    public var keyID: String
    /// The Ed25519 public key, 64 hex digits.
    public var publicKeyHex: String
    public var publicKey: [UInt8]
    public var signature: [UInt8]
}

/// Why a signed document is refused: `reason` is a short, content-free word for logs (`malformed`,
/// `not-canonical`, `bad-signature`, `unknown-key`), `detail` says what is wrong.
public struct SignatureProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var detail: String
    public var keyID: String?

    public init(reason: String, detail: String, keyID: String? = nil) {
        self.reason = reason
        self.detail = detail
        self.keyID = keyID
    }

    public var description: String { "\(reason): \(detail)" }
}

/// The signing scheme every signed document of the device uses (credit records, generation receipts): a JSON
/// object whose bytes are its RFC 8785 canonical form, with `device {keyId, publicKey}` and `signature {algorithm:
/// "Ed25519", value}`, the signature covering the canonical bytes of the object without `signature`.
public enum SignedDocument {
    /// `body` with `device` and `signature` added, as canonical bytes.
    public static func sign(_ body: [String: JSONValue], key: DeviceKey, lib: LibCrypto) throws -> [UInt8] {
        var document = body
        document["device"] = .object(["keyId": .string(key.keyID), "publicKey": .string(Hex.encode(key.publicKey))])
        let message = try CanonicalJSON.bytes(.object(document))
        let signature = try lib.sign(message, privateKey: key.privateKey)
        document["signature"] = .object(["algorithm": .string("Ed25519"), "value": .string(Hex.encode(signature))])
        return try CanonicalJSON.bytes(.object(document))
    }

    /// Whether `bytes` are exactly the canonical form of `value` (so a changed byte cannot survive by reformatting).
    public static func isCanonical(_ value: JSONValue, bytes: [UInt8]) -> Bool {
        guard let canonical = try? CanonicalJSON.bytes(value) else { return false }
        return canonical == bytes
    }

    /// The signer named by `document`'s `device` and `signature`; `keyId` must name `publicKey`.
    public static func signer(of document: [String: JSONValue], lib: LibCrypto) throws -> DocumentSigner {
        guard case .object(let device)? = document["device"], let keyID = device["keyId"]?.stringValue,
            let publicHex = device["publicKey"]?.stringValue, let publicKey = Hex.decode(publicHex),
            publicKey.count == 32
        else {
            throw SignatureProblem(reason: "malformed", detail: "no device.keyId and device.publicKey (64 hex digits)")
        }
        guard case .object(let signature)? = document["signature"], signature["algorithm"]?.stringValue == "Ed25519",
            let signatureHex = signature["value"]?.stringValue, let signatureBytes = Hex.decode(signatureHex),
            signatureBytes.count == 64, signature.count == 2
        else {
            throw SignatureProblem(
                reason: "malformed", detail: "no Ed25519 signature (128 hex digits)", keyID: keyID)
        }
        guard String(try SHA256Digest.hex(publicKey, lib: lib).prefix(16)) == keyID else {
            throw SignatureProblem(
                reason: "malformed", detail: "device.keyId does not name device.publicKey", keyID: keyID)
        }
        return DocumentSigner(keyID: keyID, publicKeyHex: publicHex, publicKey: publicKey, signature: signatureBytes)
    }

    /// Checks the signature of `document` (the object without `signature`, canonical) by `signer`.
    public static func checkSignature(_ document: [String: JSONValue], signer: DocumentSigner, lib: LibCrypto) throws {
        var unsigned = document
        unsigned["signature"] = nil
        let message = try CanonicalJSON.bytes(.object(unsigned))
        guard lib.verify(message, signature: signer.signature, publicKey: signer.publicKey) else {
            throw SignatureProblem(
                reason: "bad-signature", detail: "the Ed25519 signature does not match the document",
                keyID: signer.keyID)
        }
    }
}
