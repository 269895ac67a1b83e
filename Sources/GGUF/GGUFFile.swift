import SanadFiles

/// One tensor of a GGUF file: its name, type, shape (ggml order: `dimensions[0]` is the contiguous row length) and
/// where its bytes lie. Offsets are validated against the file before a `GGUFTensorInfo` exists.
public struct GGUFTensorInfo: Sendable, Equatable {
    public let name: String
    public let type: GGMLType
    /// ggml order: `dimensions[0]` varies fastest (elements per row), `dimensions[1]` is the row count, …
    public let dimensions: [Int]
    /// Offset of the first byte from the start of the file.
    public let fileOffset: Int
    /// Bytes the tensor takes in the file.
    public let byteCount: Int

    public var elementCount: Int { dimensions.reduce(1, *) }
    /// Elements per row (`dimensions[0]`).
    public var rowLength: Int { dimensions.first ?? 1 }
    /// Number of rows (product of all dimensions but the first).
    public var rowCount: Int { dimensions.dropFirst().reduce(1, *) }
    /// Bytes per row.
    public var rowBytes: Int { rowLength / type.blockSize * type.blockBytes }
}

/// A memory-mapped, validated GGUF file (versions 2 and 3).
///
/// Opening reads the header, every metadata pair (arrays included) and every tensor info, and checks each count,
/// length, offset and size against the file length before using it, so a hostile or truncated file gives a
/// `GGUFError` naming the file and the problem — never a crash or a huge allocation.
// @unchecked Sendable: immutable after parsing; the mapped bytes are read-only
public final class GGUFFile: @unchecked Sendable {
    public let path: String
    public let version: UInt32
    public let mapping: MappedFile
    /// Metadata in file order.
    public let metadataKeys: [String]
    public let metadata: [String: GGUFValue]
    /// Tensors in file order.
    public let tensors: [GGUFTensorInfo]
    public let alignment: Int
    /// Offset of the tensor data section.
    public let dataOffset: Int
    private let tensorIndex: [String: Int]
    /// `ModelValidation.validate`'s verdict, once computed.
    let validation = ValidationVerdict()

    /// Arrays nested deeper than this are refused (GGUF files in practice nest at most once).
    static let maximumArrayDepth = 4
    /// ggml's GGML_MAX_DIMS.
    static let maximumDimensions = 4

    public convenience init(path: String) throws {
        let mapping: MappedFile
        do {
            mapping = try MappedFile(path: path)
        } catch MappedFileError.cannotOpen(let path, let reason) {
            throw GGUFError.cannotOpen(path: path, reason: reason)
        } catch {
            throw GGUFError.truncated(path: path, offset: 0, needed: 4, what: "the magic")  // empty
        }
        try self.init(mapping: mapping)
    }

    public init(mapping: MappedFile) throws {
        self.mapping = mapping
        self.path = mapping.path
        var reader = ByteReader(bytes: mapping.bytes, path: mapping.path)

        let magic = try reader.read(UInt32.self, what: "the magic")
        guard magic == 0x4655_4747 else { throw GGUFError.notGGUF(path: path) }  // "GGUF" little-endian
        version = try reader.read(UInt32.self, what: "the version")
        guard version == 2 || version == 3 else { throw GGUFError.unsupportedVersion(path: path, version: version) }
        let tensorCount = try reader.readCount(minimumElementSize: 24, what: "the tensor count")
        let keyCount = try reader.readCount(minimumElementSize: 13, what: "the metadata count")

        var keys: [String] = []
        var values: [String: GGUFValue] = [:]
        keys.reserveCapacity(keyCount)
        for index in 0..<keyCount {
            let keyOffset = reader.offset
            let key = try reader.readString(what: "metadata key #\(index)")
            let rawType = try reader.read(UInt32.self, what: "the type of metadata '\(key)'")
            guard let type = GGUFValueType(rawValue: rawType) else {
                throw GGUFError.malformed(
                    path: path, offset: keyOffset, what: "metadata '\(key)' has unknown value type \(rawType)")
            }
            let value = try reader.readValue(type, key: key, depth: 0)
            guard values[key] == nil else {
                throw GGUFError.malformed(path: path, offset: keyOffset, what: "duplicate metadata key '\(key)'")
            }
            keys.append(key)
            values[key] = value
        }
        metadataKeys = keys
        metadata = values

        var alignment = 32
        if let value = values["general.alignment"] {
            guard let a = value.intValue, a > 0, a & (a - 1) == 0, a <= 1 << 20 else {
                throw GGUFError.malformed(
                    path: path, offset: 0, what: "general.alignment \(value) is not a power of two")
            }
            alignment = a
        }
        self.alignment = alignment

        struct RawTensor {
            let name: String
            let type: GGMLType
            let dims: [Int]
            let relativeOffset: Int
            let byteCount: Int
            let infoOffset: Int
        }
        var raw: [RawTensor] = []
        raw.reserveCapacity(tensorCount)
        var index: [String: Int] = [:]
        for i in 0..<tensorCount {
            let infoOffset = reader.offset
            let name = try reader.readString(what: "tensor name #\(i)")
            let dimCount = Int(try reader.read(UInt32.self, what: "dimension count of tensor '\(name)'"))
            guard (1...Self.maximumDimensions).contains(dimCount) else {
                throw GGUFError.malformed(
                    path: path, offset: infoOffset,
                    what: "tensor '\(name)' has \(dimCount) dimensions (1…\(Self.maximumDimensions) allowed)")
            }
            var dims: [Int] = []
            var elements = 1
            for d in 0..<dimCount {
                let raw = try reader.read(UInt64.self, what: "dimension \(d) of tensor '\(name)'")
                guard raw > 0, raw <= UInt64(Int32.max) else {
                    throw GGUFError.malformed(
                        path: path, offset: infoOffset, what: "tensor '\(name)' has dimension \(d) = \(raw)")
                }
                let (product, overflow) = elements.multipliedReportingOverflow(by: Int(raw))
                guard !overflow, product <= 1 << 52 else {
                    throw GGUFError.malformed(
                        path: path, offset: infoOffset, what: "tensor '\(name)' has an impossible element count")
                }
                elements = product
                dims.append(Int(raw))
            }
            let rawType = try reader.read(UInt32.self, what: "type of tensor '\(name)'")
            guard let type = GGMLType(rawValue: rawType) else {
                throw GGUFError.malformed(
                    path: path, offset: infoOffset, what: "tensor '\(name)' has unknown ggml type \(rawType)")
            }
            guard dims[0] % type.blockSize == 0 else {
                throw GGUFError.malformed(
                    path: path, offset: infoOffset,
                    what: "tensor '\(name)' row length \(dims[0]) is not a multiple of the \(type) block size "
                        + "\(type.blockSize)")
            }
            let offset = try reader.read(UInt64.self, what: "data offset of tensor '\(name)'")
            // An offset past the end is reported below as truncation, once the data section start is known.
            guard offset < UInt64(1) << 60, Int(offset) % alignment == 0 else {
                throw GGUFError.malformed(
                    path: path, offset: infoOffset,
                    what: "tensor '\(name)' data offset \(offset) is out of range or not aligned to \(alignment)")
            }
            guard index[name] == nil else {
                throw GGUFError.malformed(path: path, offset: infoOffset, what: "duplicate tensor name '\(name)'")
            }
            index[name] = raw.count
            let bytes = elements / type.blockSize * type.blockBytes
            raw.append(
                RawTensor(
                    name: name, type: type, dims: dims, relativeOffset: Int(offset), byteCount: bytes,
                    infoOffset: infoOffset))
        }

        let (aligned, overflow) = reader.offset.addingReportingOverflow(alignment - 1)
        guard !overflow else { throw GGUFError.malformed(path: path, offset: reader.offset, what: "data offset") }
        dataOffset = aligned / alignment * alignment
        if !raw.isEmpty && dataOffset > mapping.count {
            throw GGUFError.truncated(
                path: path, offset: dataOffset, needed: 1, what: "the tensor data section")
        }
        var infos: [GGUFTensorInfo] = []
        infos.reserveCapacity(raw.count)
        for t in raw {
            let start = dataOffset + t.relativeOffset
            let (end, overflow) = start.addingReportingOverflow(t.byteCount)
            guard !overflow, end <= mapping.count else {
                throw GGUFError.truncated(
                    path: path, offset: start, needed: t.byteCount, what: "the data of tensor '\(t.name)'")
            }
            infos.append(
                GGUFTensorInfo(
                    name: t.name, type: t.type, dimensions: t.dims, fileOffset: start, byteCount: t.byteCount))
        }
        tensors = infos
        tensorIndex = index
        // The header is parsed into values now: its pages (1.8 MiB for a 49k-token vocabulary) can leave resident
        // memory; a later read maps them back.
        mapping.release(mapping.base, byteCount: min(dataOffset, mapping.count))
    }

    // MARK: Metadata access

    /// The tensor called `name`, if the file has it.
    public func tensor(named name: String) -> GGUFTensorInfo? {
        tensorIndex[name].map { tensors[$0] }
    }

    /// The tensor called `name`, or a `missingTensor` error.
    public func requireTensor(_ name: String) throws -> GGUFTensorInfo {
        guard let t = tensor(named: name) else { throw GGUFError.missingTensor(path: path, name: name) }
        return t
    }

    /// Raw bytes of a tensor (memory-mapped; valid while this file lives).
    public func data(of tensor: GGUFTensorInfo) -> UnsafeRawPointer {
        mapping.base + tensor.fileOffset
    }

    public func string(_ key: String) -> String? { metadata[key]?.stringValue }
    public func int(_ key: String) -> Int? { metadata[key]?.intValue }
    public func double(_ key: String) -> Double? { metadata[key]?.doubleValue }
    public func bool(_ key: String) -> Bool? { metadata[key]?.boolValue }

    public func requireInt(_ key: String) throws -> Int {
        guard let v = metadata[key] else { throw GGUFError.missingKey(path: path, key: key) }
        guard let i = v.intValue else {
            throw GGUFError.wrongKeyType(path: path, key: key, expected: "an integer", found: v.type.description)
        }
        return i
    }

    public func requireString(_ key: String) throws -> String {
        guard let v = metadata[key] else { throw GGUFError.missingKey(path: path, key: key) }
        guard let s = v.stringValue else {
            throw GGUFError.wrongKeyType(path: path, key: key, expected: "a string", found: v.type.description)
        }
        return s
    }

    /// A string array (for example `tokenizer.ggml.tokens`), or nil when absent; a wrong type throws.
    public func stringArray(_ key: String) throws -> [String]? {
        guard let v = metadata[key] else { return nil }
        guard case .array(let t, let values) = v, t == .string || values.isEmpty else {
            throw GGUFError.wrongKeyType(path: path, key: key, expected: "an array of strings", found: v.description)
        }
        return values.compactMap(\.stringValue)
    }

    /// A numeric array as Doubles, or nil when absent; a wrong type throws.
    public func numberArray(_ key: String) throws -> [Double]? {
        guard let v = metadata[key] else { return nil }
        guard case .array(_, let values) = v else {
            throw GGUFError.wrongKeyType(path: path, key: key, expected: "a numeric array", found: v.type.description)
        }
        var out: [Double] = []
        out.reserveCapacity(values.count)
        for value in values {
            guard let d = value.doubleValue else {
                throw GGUFError.wrongKeyType(
                    path: path, key: key, expected: "a numeric array", found: "array of \(value.type)")
            }
            out.append(d)
        }
        return out
    }

    /// `general.architecture`, the key every model-specific key is prefixed with.
    public var architecture: String? { string("general.architecture") }

    /// Total bytes of all tensors.
    public var tensorBytes: Int { tensors.reduce(0) { $0 + $1.byteCount } }

    /// Total elements of all tensors (the parameter count llama.cpp reports).
    public var parameterCount: Int { tensors.reduce(0) { $0 + $1.elementCount } }
}

/// A bounds-checked little-endian cursor over the mapped bytes.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    let path: String
    var offset = 0

    init(bytes: UnsafeRawBufferPointer, path: String) {
        self.bytes = bytes
        self.path = path
    }

    var remaining: Int { bytes.count - offset }

    mutating func read<T: FixedWidthInteger>(_ type: T.Type, what: String) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else {
            throw GGUFError.truncated(path: path, offset: offset, needed: size, what: what)
        }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: value)
    }

    /// A u64 count, refused when `count × minimumElementSize` could not fit in the rest of the file.
    mutating func readCount(minimumElementSize: Int, what: String) throws -> Int {
        let at = offset
        let raw = try read(UInt64.self, what: what)
        guard raw <= UInt64(remaining / max(minimumElementSize, 1)) else {
            throw GGUFError.malformed(
                path: path, offset: at,
                what: "\(what) is \(raw), more than the \(remaining) remaining bytes can hold")
        }
        return Int(raw)
    }

    mutating func readString(what: String) throws -> String {
        let length = try readCount(minimumElementSize: 1, what: "the length of \(what)")
        let start = offset
        offset += length
        let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<start + length])
        // Invalid UTF-8 is repaired (U+FFFD), as llama.cpp keeps the bytes and never trusts them as text.
        return String(decoding: slice, as: UTF8.self)
    }

    mutating func readValue(_ type: GGUFValueType, key: String, depth: Int) throws -> GGUFValue {
        let what = "metadata '\(key)'"
        switch type {
        case .uint8: return .uint8(try read(UInt8.self, what: what))
        case .int8: return .int8(try read(Int8.self, what: what))
        case .uint16: return .uint16(try read(UInt16.self, what: what))
        case .int16: return .int16(try read(Int16.self, what: what))
        case .uint32: return .uint32(try read(UInt32.self, what: what))
        case .int32: return .int32(try read(Int32.self, what: what))
        case .uint64: return .uint64(try read(UInt64.self, what: what))
        case .int64: return .int64(try read(Int64.self, what: what))
        case .float32: return .float32(Float(bitPattern: try read(UInt32.self, what: what)))
        case .float64: return .float64(Double(bitPattern: try read(UInt64.self, what: what)))
        case .bool:
            let at = offset
            let b = try read(UInt8.self, what: what)
            guard b <= 1 else { throw GGUFError.malformed(path: path, offset: at, what: "\(what) bool is \(b)") }
            return .bool(b == 1)
        case .string: return .string(try readString(what: what))
        case .array:
            let at = offset
            guard depth < GGUFFile.maximumArrayDepth else {
                throw GGUFError.malformed(path: path, offset: at, what: "\(what) nests arrays too deeply")
            }
            let rawType = try read(UInt32.self, what: "the element type of \(what)")
            guard let elementType = GGUFValueType(rawValue: rawType) else {
                throw GGUFError.malformed(path: path, offset: at, what: "\(what) has unknown element type \(rawType)")
            }
            let count = try readCount(minimumElementSize: elementType.minimumSize, what: "the length of \(what)")
            switch elementType {
            case .string:
                var text: [UInt8] = []
                var ends: [Int] = []
                ends.reserveCapacity(count)
                for _ in 0..<count {
                    let length = try readCount(minimumElementSize: 1, what: "the length of a string in \(what)")
                    text.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]))
                    offset += length
                    ends.append(text.count)
                }
                return .array(elementType, GGUFArray(storage: .strings(bytes: text, ends: ends)))
            case .int32:
                var values: [Int32] = []
                values.reserveCapacity(count)
                for _ in 0..<count { values.append(try read(Int32.self, what: what)) }
                return .array(elementType, GGUFArray(storage: .int32s(values)))
            case .float32:
                var values: [Float] = []
                values.reserveCapacity(count)
                for _ in 0..<count { values.append(Float(bitPattern: try read(UInt32.self, what: what))) }
                return .array(elementType, GGUFArray(storage: .float32s(values)))
            default:
                var values: [GGUFValue] = []
                values.reserveCapacity(count)
                for _ in 0..<count {
                    values.append(try readValue(elementType, key: key, depth: depth + 1))
                }
                return .array(elementType, GGUFArray(values))
            }
        }
    }
}
