import SanadCore

extension CompiledSchema {
    /// The schema as a GBNF grammar (llama.cpp's grammar language, start rule `root`) for engines that constrain
    /// with their own grammar sampler. It accepts a subset of what `JSONMatcher` accepts: the same property order,
    /// no whitespace at all, numbers without an exponent with at most 15 digits on each side of the point, and
    /// number bounds rounded inwards to whole numbers (a number schema whose bounds hold no whole number is an
    /// error). A string with a `pattern` and a length limit together cannot be written as a grammar: an error.
    public func gbnf() throws(SchemaError) -> String {
        var writer = GrammarWriter(nodes: nodes)
        for index in nodes.indices { try writer.write(index) }
        return (["root ::= n\(root)", jsonCharacterRule] + writer.rules).joined(separator: "\n") + "\n"
    }
}

/// One character inside a JSON string: any scalar but `"`, `\` and controls, or a short escape.
let jsonCharacterRule = #"char ::= [^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt]"#

/// Writes the rules of a `CompiledSchema`'s nodes: node i is rule `n<i>`, its helpers `n<i>-…`.
struct GrammarWriter {
    let nodes: [CompiledSchema.Node]
    var rules: [String] = []

    mutating func write(_ index: Int) throws(SchemaError) {
        let name = "n\(index)"
        switch nodes[index] {
        case .object(let properties): writeObject(name, properties)
        case .array(let items, let minItems, let maxItems):
            let item = "n\(items)"
            let body: String
            if maxItems == 0 {
                body = ""
            } else if minItems == 0 {
                body = "(\(item) " + repeated("(\",\" \(item))", 0, maxItems.map { $0 - 1 }) + ")?"
            } else {
                body = "\(item) " + repeated("(\",\" \(item))", minItems - 1, maxItems.map { $0 - 1 })
            }
            rules.append("\(name) ::= \"[\" \(body) \"]\"")
        case .string(let rule):
            if let pattern = rule.pattern {
                guard rule.minLength == 0 && rule.maxLength == nil else {
                    throw SchemaError(
                        pointer: "",
                        problem: "a string with both a pattern and minLength/maxLength cannot be written "
                            + "as a grammar for the llama engine; use the pure-swift or blas engine")
                }
                rules.append("\(name) ::= \"\\\"\" \(writePattern(name, pattern)) \"\\\"\"")
            } else {
                rules.append("\(name) ::= \"\\\"\" \(repeated("char", rule.minLength, rule.maxLength)) \"\\\"\"")
            }
        case .number(let rule):
            guard let body = numberGrammar(rule) else {
                throw SchemaError(
                    pointer: "",
                    problem: "no whole number lies within minimum…maximum (\(rule.minimum ?? -.infinity)"
                        + "…\(rule.maximum ?? .infinity)); the llama engine's grammar rounds number bounds inwards")
            }
            rules.append("\(name) ::= \(body)")
        case .literals(let texts):
            rules.append("\(name) ::= " + texts.map(gbnfLiteral).joined(separator: " | "))
        case .anyOf(let options):
            rules.append("\(name) ::= " + options.map { "n\($0)" }.joined(separator: " | "))
        case .alias(let target):
            rules.append("\(name) ::= n\(target)")
        }
    }

    /// Properties in order: `first(j)` writes the first present property j (those before it are optional), and
    /// every later property follows a comma, optional ones in `( … )?`.
    private mutating func writeObject(_ name: String, _ properties: [CompiledSchema.Property]) {
        for (j, p) in properties.enumerated() {
            rules.append(
                "\(name)-k\(j) ::= \(gbnfLiteral([UInt8(ascii: "\"")] + p.key + [UInt8(ascii: ":")])) n\(p.node)")
        }
        func after(_ j: Int) -> String {
            properties.indices.dropFirst(j).map { k in
                properties[k].required ? "\",\" \(name)-k\(k)" : "(\",\" \(name)-k\(k))?"
            }.joined(separator: " ")
        }
        for j in properties.indices {
            var alternatives = ["\(name)-k\(j) \(after(j + 1))"]
            if !properties[j].required && j + 1 < properties.count { alternatives.append("\(name)-f\(j + 1)") }
            rules.append("\(name)-f\(j) ::= " + alternatives.joined(separator: " | "))
        }
        let body: String
        if properties.isEmpty {
            body = ""
        } else {
            body = properties.allSatisfy { !$0.required } ? "\(name)-f0?" : "\(name)-f0"
        }
        rules.append("\(name) ::= \"{\" \(body) \"}\"")
    }

    /// The pattern's automaton as rules `<name>-p<state>`, one per byte state, each followed by the states its
    /// next state reaches without a byte (so no rule starts with another rule: no left recursion). Returns the
    /// expression for the whole match.
    private mutating func writePattern(_ name: String, _ pattern: SimplePattern) -> String {
        func continuation(_ set: SimplePattern.Bits) -> String {
            var alternatives: [String] = []
            var matches = false
            for (i, state) in pattern.states.enumerated() where set.contains(i) {
                switch state {
                case .bytes: alternatives.append("\(name)-p\(i)")
                case .match: matches = true
                case .split: break
                }
            }
            if alternatives.isEmpty { return "" }
            return "(" + alternatives.joined(separator: " | ") + ")" + (matches ? "?" : "")
        }
        for (i, state) in pattern.states.enumerated() {
            guard case .bytes(let bits, let next) = state else { continue }
            var closure = SimplePattern.Bits()
            SimplePattern.close(next, states: pattern.states, into: &closure)
            rules.append("\(name)-p\(i) ::= \(characterClass(bits)) \(continuation(closure))")
        }
        return continuation(pattern.start)
    }
}

/// `element` repeated `low` to `high` (nil: no limit) times.
func repeated(_ element: String, _ low: Int, _ high: Int?) -> String {
    if high == 0 { return "" }
    switch (low, high) {
    case (0, nil): return element + "*"
    case (1, nil): return element + "+"
    case (0, 1): return element + "?"
    case (_, nil): return element + "{\(low),}"
    case (_, let h?) where h == low: return element + "{\(low)}"
    case (_, let h?): return element + "{\(low),\(h)}"
    }
}

/// A GBNF string literal of `bytes` (UTF-8): quotes, backslashes and control bytes escaped.
func gbnfLiteral(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = [UInt8(ascii: "\"")]
    for b in bytes {
        switch b {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), b]
        case 0..<0x20, 0x7F: out += Array(hexEscape(b).utf8)
        default: out.append(b)
        }
    }
    out.append(UInt8(ascii: "\""))
    return String(decoding: out, as: UTF8.self)
}

/// A GBNF character class of the ASCII bytes in `bits`, every byte written `\xHH`.
func characterClass(_ bits: SimplePattern.Bits) -> String {
    "[" + (0..<128).filter { bits.contains($0) }.map { hexEscape(UInt8($0)) }.joined() + "]"
}

func hexEscape(_ b: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return "\\x" + String(digits[Int(b >> 4)]) + String(digits[Int(b & 15)])
}
