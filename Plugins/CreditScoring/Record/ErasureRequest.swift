import Foundation
import SanadCore
import SanadSigning

/// A device's signed request that the receiver delete every record of its key (`sanad credit privacy --erase
/// --db`): the device holds no credential that can delete rows, so it asks, and the receiver deletes only what the
/// request's own key signed. Format `sanad-credit-erasure` version 1: `requestId`, `requestedAt`, `device`,
/// `signature` (the device's one signing scheme, `SignedDocument`).
public enum ErasureRequest {
    public static let format = "sanad-credit-erasure"

    /// The canonical bytes of a request signed by `key` at `now`.
    public static func sign(key: DeviceKey, lib: LibCrypto, now: Date) throws -> [UInt8] {
        try SignedDocument.sign(
            [
                "format": .string(format), "version": .number(1), "requestId": .string(Hex.encode(try lib.random(8))),
                "requestedAt": .string(CivilTime.isoString(Int64(now.timeIntervalSince1970.rounded(.down)))),
            ], key: key, lib: lib)
    }

    /// Whether `value` claims to be an erasure request (the receiver then verifies it with `verify`).
    public static func claims(_ value: JSONValue) -> Bool { value["format"]?.stringValue == format }

    /// The key id whose records the request may erase: the bytes must be canonical, the key registered and the
    /// signature valid; otherwise the `RecordRejection` to log.
    public static func verify(
        _ bytes: [UInt8], value: JSONValue, digest: String, lib: LibCrypto, registeredKeys: Set<String>
    )
        throws -> String
    {
        func reject(_ reason: String, _ detail: String, key: String? = nil) -> RecordRejection {
            RecordRejection(reason: reason, detail: detail, keyID: key, digest: digest)
        }
        guard case .object(let request) = value, request["version"]?.intValue == 1,
            request["requestId"]?.stringValue != nil, request["requestedAt"]?.stringValue != nil
        else { throw reject("malformed", "not a \(format) version 1 {requestId, requestedAt, device, signature}") }
        let signer = try RecordVerifier.signer(of: value, object: request, bytes: bytes, noun: "request", lib: lib) {
            reject($0, $1, key: $2)
        }
        try RecordVerifier.checkSignature(
            request, signer: signer, noun: "request", registeredKeys: registeredKeys, lib: lib
        ) { reject($0, $1, key: $2) }
        return signer.keyID
    }
}
