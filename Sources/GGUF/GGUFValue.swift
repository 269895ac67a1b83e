/// The metadata value kinds of GGUF (`gguf_type` in llama.cpp's gguf.h).
public enum GGUFValueType: UInt32, Sendable, CustomStringConvertible {
    case uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6, bool = 7, string = 8
    case array = 9, uint64 = 10, int64 = 11, float64 = 12

    /// Smallest number of bytes one value of this type takes in the file (used to bound counts before allocating).
    var minimumSize: Int {
        switch self {
        case .uint8, .int8, .bool: return 1
        case .uint16, .int16: return 2
        case .uint32, .int32, .float32: return 4
        case .uint64, .int64, .float64, .string: return 8
        case .array: return 12
        }
    }

    public var description: String {
        switch self {
        case .uint8: return "uint8"
        case .int8: return "int8"
        case .uint16: return "uint16"
        case .int16: return "int16"
        case .uint32: return "uint32"
        case .int32: return "int32"
        case .float32: return "float32"
        case .bool: return "bool"
        case .string: return "string"
        case .array: return "array"
        case .uint64: return "uint64"
        case .int64: return "int64"
        case .float64: return "float64"
        }
    }
}

/// One metadata value. Arrays keep their element type so that an empty array still says what it would hold.
public enum GGUFValue: Sendable, Equatable, CustomStringConvertible {
    case uint8(UInt8), int8(Int8), uint16(UInt16), int16(Int16), uint32(UInt32), int32(Int32)
    case float32(Float), bool(Bool), string(String), uint64(UInt64), int64(Int64), float64(Double)
    case array(GGUFValueType, GGUFArray)

    public var type: GGUFValueType {
        switch self {
        case .uint8: return .uint8
        case .int8: return .int8
        case .uint16: return .uint16
        case .int16: return .int16
        case .uint32: return .uint32
        case .int32: return .int32
        case .float32: return .float32
        case .bool: return .bool
        case .string: return .string
        case .array: return .array
        case .uint64: return .uint64
        case .int64: return .int64
        case .float64: return .float64
        }
    }

    /// The value as a signed integer when it is any integer kind that fits.
    public var intValue: Int? {
        switch self {
        case .uint8(let v): return Int(v)
        case .int8(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint64(let v): return v <= UInt64(Int.max) ? Int(v) : nil
        case .int64(let v): return Int(v)
        case .bool(let v): return v ? 1 : 0
        default: return nil
        }
    }

    /// The value as a Double when it is numeric.
    public var doubleValue: Double? {
        switch self {
        case .float32(let v): return Double(v)
        case .float64(let v): return v
        default: return intValue.map(Double.init)
        }
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var arrayValue: [GGUFValue]? {
        if case .array(_, let values) = self { return Array(values) }
        return nil
    }

    /// A short human form: long strings and arrays are abbreviated.
    public var description: String {
        switch self {
        case .string(let s):
            let short = s.count > 60 ? String(s.prefix(57)) + "…" : s
            return "\"" + short.replacingNewlines() + "\""
        case .array(let t, let values):
            let head = values.prefix(4).map(\.description).joined(separator: ", ")
            return values.count > 4 ? "[\(t) × \(values.count): \(head), …]" : "[\(head)]"
        case .bool(let b): return b ? "true" : "false"
        case .float32(let v): return "\(v)"
        case .float64(let v): return "\(v)"
        default: return intValue.map(String.init) ?? "?"
        }
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        var out = ""
        for c in self { out += c == "\n" ? "\\n" : String(c) }
        return out
    }
}
