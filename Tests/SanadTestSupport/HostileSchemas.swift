import SanadCore

/// Issue 42's schema: `$defs a0…a(depth-1)`, each an `anyOf` of `width` references to the next, the last an integer.
public func fanOutSchema(depth: Int, width: Int) -> JSONValue {
    var defs: [String: JSONValue] = ["a\(depth - 1)": .object(["type": .string("integer")])]
    for i in 0..<(depth - 1) {
        let ref = JSONValue.object(["$ref": .string("#/$defs/a\(i + 1)")])
        defs["a\(i)"] = .object(["anyOf": .array(Array(repeating: ref, count: width))])
    }
    return .object(["$defs": .object(defs), "$ref": .string("#/$defs/a0")])
}
