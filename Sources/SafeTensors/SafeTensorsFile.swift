import Foundation
import SanadFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The element types of the safetensors format. All are known so that a file's byte ranges can be validated;
/// only `F32`, `F16` and `BF16` can be read as floats (`SafeTensorsFile.floats(_:)`).
public enum SafeTensorsDType: String, Sendable, CaseIterable {
    case BOOL, U8, I8, F8_E4M3, F8_E5M2, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64

    /// Bytes per element.
    public var size: Int {
        switch self {
        case .BOOL, .U8, .I8, .F8_E4M3, .F8_E5M2: return 1
        case .I16, .U16, .F16, .BF16: return 2
        case .I32, .U32, .F32: return 4
        case .F64, .I64, .U64: return 8
        }
    }

    /// Whether `floats(_:)` converts this type.
    public var isReadableAsFloat: Bool { self == .F32 || self == .F16 || self == .BF16 }
}

/// One tensor's entry in the header, validated.
public struct SafeTensorInfo: Sendable, Equatable {
    public let name: String
    public let dtype: SafeTensorsDType
    public let shape: [Int]
    /// Offset of the first byte from the start of the file.
    public let offset: Int
    public let byteCount: Int
    /// Product of `shape` (1 for a scalar).
    public var elementCount: Int { byteCount / dtype.size }
}

/// A memory-mapped, validated safetensors file: an 8-byte little-endian header length, a JSON header mapping tensor
/// names to `{dtype, shape, data_offsets}` (plus an optional `__metadata__` string map), then the data.
///
/// Opening checks everything a reader later relies on: the header fits in the file and under `maxHeaderBytes`, every
/// dtype is known, shape × element size equals the byte range (with checked arithmetic), every range lies in the
/// data section and no two overlap. A hostile file gets a `SafeTensorsError` naming the file and the tensor.
// @unchecked Sendable: immutable after opening; the mapped bytes are read-only
public final class SafeTensorsFile: @unchecked Sendable {
    /// The largest JSON header accepted (the format's own reference implementation uses 100 MB).
    public static let maxHeaderBytes = 100 * 1024 * 1024

    public let path: String
    /// The `__metadata__` map (empty when absent).
    public let metadata: [String: String]
    /// Every tensor by name.
    public let tensors: [String: SafeTensorInfo]
    /// The file's bytes, mapped read-only while this value lives.
    private let mapping: MappedFile
    private var base: UnsafeRawPointer { mapping.base }
    private var count: Int { mapping.count }

    /// Maps and validates the file at `path`. Only regular files are opened (a FIFO or device is refused without
    /// blocking).
    public init(path: String) throws {
        self.path = path
        let mapping: MappedFile
        do {
            mapping = try MappedFile(path: path)
        } catch MappedFileError.cannotOpen(let path, let reason) {
            throw SafeTensorsError.cannotOpen(path: path, reason: reason)
        } catch {
            throw SafeTensorsError.truncated(path: path, what: "the 8-byte header length is missing")  // empty
        }
        guard mapping.count >= 8 else {
            throw SafeTensorsError.truncated(path: path, what: "the 8-byte header length is missing")
        }
        (metadata, tensors) = try Self.parse(path: path, base: mapping.base, count: mapping.count)
        self.mapping = mapping
    }

    /// Tensor names sorted by their position in the file.
    public var names: [String] { tensors.values.sorted { $0.offset < $1.offset }.map(\.name) }

    /// The entry for `name`, or an error naming the file and the tensor.
    public func info(_ name: String) throws -> SafeTensorInfo {
        guard let t = tensors[name] else { throw SafeTensorsError.missingTensor(path: path, name: name) }
        return t
    }

    /// The entry for `name`, checked to have `shape`.
    public func info(_ name: String, shape: [Int]) throws -> SafeTensorInfo {
        let t = try info(name)
        guard t.shape == shape else {
            throw SafeTensorsError.wrongShape(path: path, tensor: name, expected: shape, found: t.shape)
        }
        return t
    }

    /// The raw bytes of a tensor, straight from the mapping (valid while this object lives).
    public func bytes(_ tensor: SafeTensorInfo) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + tensor.offset, count: tensor.byteCount)
    }

    /// The tensor `name` as 32-bit floats (F16 and BF16 converted), optionally checked to have `shape`.
    public func floats(_ name: String, shape: [Int]? = nil) throws -> [Float] {
        let t = try shape.map { try info(name, shape: $0) } ?? info(name)
        let raw = bytes(t)
        let n = t.elementCount
        switch t.dtype {
        case .F32:
            return [Float](unsafeUninitializedCapacity: n) { out, done in
                memcpy(out.baseAddress!, raw.baseAddress!, n * 4)
                done = n
            }
        case .F16:
            return (0..<n).map { i in
                Float(
                    Float16(bitPattern: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)))
                )
            }
        case .BF16:
            return (0..<n).map { i in
                let bits = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))
                return Float(bitPattern: UInt32(bits) << 16)
            }
        default:
            throw SafeTensorsError.unsupportedDType(path: path, tensor: name, dtype: t.dtype.rawValue)
        }
    }

    // MARK: - Header parsing

    private struct Entry: Decodable {
        let dtype: String
        let shape: [Int]
        let data_offsets: [Int]
    }

    private enum HeaderValue: Decodable {
        case tensor(Entry)
        case metadata([String: String])
        init(from decoder: Decoder) throws {
            if let e = try? Entry(from: decoder) {
                self = .tensor(e)
            } else {
                self = .metadata(try [String: String](from: decoder))
            }
        }
    }

    private static func parse(path: String, base: UnsafeRawPointer, count: Int) throws -> (
        [String: String], [String: SafeTensorInfo]
    ) {
        let declared = UInt64(littleEndian: base.loadUnaligned(as: UInt64.self))
        guard declared <= UInt64(maxHeaderBytes) else {
            throw SafeTensorsError.malformedHeader(
                path: path, what: "the header length \(declared) is over the limit of \(maxHeaderBytes) bytes")
        }
        let headerLength = Int(declared)
        guard headerLength >= 2 else {
            throw SafeTensorsError.malformedHeader(path: path, what: "the header length \(headerLength) is too small")
        }
        guard headerLength <= count - 8 else {
            throw SafeTensorsError.truncated(
                path: path, what: "the header needs \(headerLength) bytes, the file has \(count - 8) after the length")
        }
        let json = Data(bytes: base + 8, count: headerLength)
        guard json.first == UInt8(ascii: "{") else {
            throw SafeTensorsError.malformedHeader(path: path, what: "the header does not start with '{'")
        }
        let decoded: [String: HeaderValue]
        do {
            decoded = try JSONDecoder().decode([String: HeaderValue].self, from: json)
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
            throw SafeTensorsError.malformedHeader(path: path, what: "the header is not valid JSON")
        } catch let error as DecodingError {
            let key = Self.firstKey(of: error) ?? "?"
            throw SafeTensorsError.malformedTensor(
                path: path, tensor: key, what: "is not {dtype, shape, data_offsets} with integer shape and offsets")
        } catch {
            throw SafeTensorsError.malformedHeader(path: path, what: "the header is not valid JSON")
        }
        let dataStart = 8 + headerLength
        let dataSize = count - dataStart
        var metadata: [String: String] = [:]
        var tensors: [String: SafeTensorInfo] = [:]
        var ranges: [(begin: Int, end: Int, name: String)] = []
        for (name, value) in decoded {
            switch value {
            case .metadata(let map):
                guard name == "__metadata__" else {
                    throw SafeTensorsError.malformedTensor(
                        path: path, tensor: name, what: "is a string map; only '__metadata__' may be one")
                }
                metadata = map
            case .tensor(let e):
                guard name != "__metadata__" else {
                    throw SafeTensorsError.malformedHeader(path: path, what: "'__metadata__' is not a string map")
                }
                guard let dtype = SafeTensorsDType(rawValue: e.dtype) else {
                    throw SafeTensorsError.unsupportedDType(path: path, tensor: name, dtype: e.dtype)
                }
                guard e.data_offsets.count == 2 else {
                    throw SafeTensorsError.malformedTensor(
                        path: path, tensor: name, what: "has \(e.data_offsets.count) data_offsets, expected 2")
                }
                let begin = e.data_offsets[0]
                let end = e.data_offsets[1]
                guard begin >= 0, begin <= end, end <= dataSize else {
                    throw SafeTensorsError.malformedTensor(
                        path: path, tensor: name,
                        what: "has data_offsets [\(begin), \(end)] outside the \(dataSize)-byte data section")
                }
                var bytes = dtype.size
                for d in e.shape {
                    guard d >= 0 else {
                        throw SafeTensorsError.malformedTensor(
                            path: path, tensor: name, what: "has a negative dimension in shape \(e.shape)")
                    }
                    let (product, overflow) = bytes.multipliedReportingOverflow(by: d)
                    guard !overflow else {
                        throw SafeTensorsError.malformedTensor(
                            path: path, tensor: name, what: "has shape \(e.shape) whose byte size overflows")
                    }
                    bytes = product
                }
                guard bytes == end - begin else {
                    throw SafeTensorsError.malformedTensor(
                        path: path, tensor: name,
                        what: "has shape \(e.shape) of \(dtype.rawValue) (\(bytes) bytes) but a \(end - begin)-byte "
                            + "range")
                }
                tensors[name] = SafeTensorInfo(
                    name: name, dtype: dtype, shape: e.shape, offset: dataStart + begin, byteCount: bytes)
                ranges.append((begin, end, name))
            }
        }
        ranges.sort { ($0.begin, $0.end) < ($1.begin, $1.end) }
        for i in ranges.indices.dropFirst() where ranges[i].begin < ranges[i - 1].end {
            throw SafeTensorsError.malformedTensor(
                path: path, tensor: ranges[i].name, what: "overlaps the tensor '\(ranges[i - 1].name)'")
        }
        return (metadata, tensors)
    }

    private static func firstKey(of error: DecodingError) -> String? {
        let path: [CodingKey]
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c):
            path = c.codingPath
        @unknown default:
            return nil
        }
        return path.first?.stringValue
    }
}
