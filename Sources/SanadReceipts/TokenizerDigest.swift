import GGUF
import SanadSigning

/// The digests a receipt gives a model's tokenizer and chat template, read from its GGUF metadata.
public enum TokenizerDigest {
    /// The chat template key (digested on its own: `chatTemplateSHA256`).
    public static let chatTemplateKey = "tokenizer.chat_template"

    /// SHA-256 of every `tokenizer.*` metadata value but the chat template (the vocabulary, scores, token types,
    /// merges, special token ids and flags), keys in byte order, each written as the key's UTF-8 bytes, a 0 byte
    /// and its value in `encode`'s stable binary form. Any changed token, merge or flag changes it.
    public static func sha256(_ file: GGUFFile, lib: LibCrypto) throws -> String {
        var bytes: [UInt8] = []
        let keys = file.metadataKeys.filter { $0.hasPrefix("tokenizer.") && $0 != chatTemplateKey }
        for key in keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            guard let value = file.metadata[key] else { continue }
            bytes += Array(key.utf8)
            bytes.append(0)
            encode(value, into: &bytes)
        }
        return try SHA256Digest.hex(bytes, lib: lib)
    }

    /// SHA-256 of the UTF-8 bytes of the model's own chat template, or nil when it has none.
    public static func chatTemplateSHA256(_ file: GGUFFile, lib: LibCrypto) throws -> String? {
        guard let template = file.string(chatTemplateKey) else { return nil }
        return try SHA256Digest.hex(Array(template.utf8), lib: lib)
    }

    /// A value as its GGUF type code (one byte) then: integers as 8 little-endian bytes (their Int64 or UInt64 bit
    /// pattern), floats as their IEEE bit pattern (4 or 8 bytes), a bool as one byte, a string as its length (8
    /// bytes) and UTF-8 bytes, an array as its element type code, its count (8 bytes) and its elements.
    static func encode(_ value: GGUFValue, into out: inout [UInt8]) {
        func append<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        out.append(UInt8(truncatingIfNeeded: value.type.rawValue))
        switch value {
        case .uint8(let v): append(UInt64(v))
        case .int8(let v): append(Int64(v))
        case .uint16(let v): append(UInt64(v))
        case .int16(let v): append(Int64(v))
        case .uint32(let v): append(UInt64(v))
        case .int32(let v): append(Int64(v))
        case .uint64(let v): append(v)
        case .int64(let v): append(v)
        case .float32(let v): append(v.bitPattern)
        case .float64(let v): append(v.bitPattern)
        case .bool(let v): out.append(v ? 1 : 0)
        case .string(let s):
            append(UInt64(s.utf8.count))
            out += Array(s.utf8)
        case .array(let elementType, let items):
            out.append(UInt8(truncatingIfNeeded: elementType.rawValue))
            append(UInt64(items.count))
            for item in items { encode(item, into: &out) }
        }
    }
}
