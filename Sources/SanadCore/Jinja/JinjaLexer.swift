/// Why a template could not be parsed or rendered. `raised` is the template's own `raise_exception(message)`.
public enum JinjaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The template is not valid Jinja (or uses a tag, filter or test jinja2 lacks); `line` is 1-based.
    case syntax(String, line: Int)
    /// jinja2's `UndefinedError`: a missing value was used as more than an empty, falsy value.
    case undefined(String)
    /// A Python `TypeError` / `ValueError`: an operation on values of the wrong kind.
    case type(String)
    /// The template called `raise_exception(message)`.
    case raised(String)
    /// jinja2's sandbox refused a call that mutates a value (`list.append`, `dict.pop`).
    case security(String)
    /// A jinja2 feature this interpreter does not implement.
    case unsupported(String)

    public var description: String {
        switch self {
        case .syntax(let m, let line): return "template syntax error at line \(line): \(m)"
        case .undefined(let m): return "undefined value in the template: \(m)"
        case .type(let m): return "template type error: \(m)"
        case .raised(let m): return "the template raised an exception: \(m)"
        case .security(let m): return "the template did something jinja2's sandbox forbids: \(m)"
        case .unsupported(let m): return "the template uses a Jinja feature Sanad does not implement: \(m)"
        }
    }
}

/// One token inside `{{ … }}` or `{% … %}`.
enum JinjaToken: Equatable, Sendable {
    case name(String)
    case string(String)
    case int(Int)
    case double(Double)
    case op(String)
}

/// The template cut into text and tags, with whitespace control applied as jinja2 does with transformers'
/// settings (`trim_blocks=True`, `lstrip_blocks=True`, `keep_trailing_newline=False`).
enum JinjaSegment: Sendable {
    case text(String)
    case output([JinjaToken], line: Int)
    case statement([JinjaToken], line: Int)
}

struct JinjaLexer {
    private let s: [Unicode.Scalar]
    private var i = 0
    private var line = 1

    init(_ source: String) {
        var scalars = Array(source.replacingOccurrences(of: "\r\n", with: "\n").unicodeScalars)
        if scalars.last == "\n" { scalars.removeLast() }
        s = scalars
    }

    private func at(_ k: Int) -> Unicode.Scalar? { k < s.count ? s[k] : nil }

    private func starts(_ text: String, at k: Int) -> Bool {
        var j = k
        for c in text.unicodeScalars {
            guard j < s.count, s[j] == c else { return false }
            j += 1
        }
        return true
    }

    mutating func segments() throws -> [JinjaSegment] {
        var out: [JinjaSegment] = []
        var lineStarting = true
        var pendingLStrip = false  // a `-` closed the previous tag: strip leading whitespace of the next text
        while i < s.count {
            // Find the next tag opening.
            var j = i
            var opener: Unicode.Scalar? = nil
            while j + 1 < s.count {
                if s[j] == "{", let n = at(j + 1), n == "{" || n == "%" || n == "#" {
                    opener = n
                    break
                }
                j += 1
            }
            if opener == nil { j = s.count }
            var text = String(String.UnicodeScalarView(s[i..<j]))
            if pendingLStrip {
                text = String(text.drop { $0.isWhitespace })
                pendingLStrip = false
            }
            line += s[i..<j].filter { $0 == "\n" }.count
            guard let opener else {
                if !text.isEmpty { out.append(.text(text)) }
                break
            }
            let sign = at(j + 2)
            if sign == "-" {
                while let last = text.unicodeScalars.last, last.properties.isWhitespace {
                    text.unicodeScalars.removeLast()
                }
            } else if sign != "+" && opener != "{" {
                // lstrip_blocks: spaces and tabs between the line start and a block or comment tag go.
                let scalars = Array(text.unicodeScalars)
                let lineStart = (scalars.lastIndex(of: "\n").map { $0 + 1 }) ?? 0
                if lineStart > 0 || lineStarting {
                    if scalars[lineStart...].allSatisfy({ $0 == " " || $0 == "\t" }) {
                        text = String(String.UnicodeScalarView(scalars[..<lineStart]))
                    }
                }
            }
            if !text.isEmpty { out.append(.text(text)) }
            i = j + 2
            if sign == "-" || sign == "+" { i += 1 }
            let tagLine = line
            switch opener {
            case "#":
                guard let end = findCommentEnd() else {
                    throw JinjaError.syntax("missing end of comment tag", line: tagLine)
                }
                line += s[i..<end.start].filter { $0 == "\n" }.count
                i = end.after
                pendingLStrip = end.strip
                if !end.strip && !end.keep && at(i) == "\n" {
                    i += 1
                    line += 1
                }
            default:
                let (tokens, strip, keep) = try expressionTokens(closer: opener == "{" ? "}}" : "%}", line: tagLine)
                if opener == "{" {
                    out.append(.output(tokens, line: tagLine))
                } else {
                    // {% raw %} … {% endraw %}: the text between is kept as written.
                    if tokens == [.name("raw")] {
                        try raw(into: &out, strip: strip, keep: keep)
                        lineStarting = false
                        continue
                    }
                    out.append(.statement(tokens, line: tagLine))
                    if !strip && !keep && at(i) == "\n" {
                        i += 1
                        line += 1
                    }
                }
                pendingLStrip = strip
            }
            lineStarting = i > 0 && s[i - 1] == "\n"
        }
        return out
    }

    private mutating func raw(into out: inout [JinjaSegment], strip: Bool, keep: Bool) throws {
        if !strip && !keep && at(i) == "\n" { i += 1 }
        var j = i
        while j < s.count {
            if starts("{%", at: j) {
                var k = j + 2
                if at(k) == "-" || at(k) == "+" { k += 1 }
                while at(k) == " " { k += 1 }
                if starts("endraw", at: k) {
                    var text = String(String.UnicodeScalarView(s[i..<j]))
                    if strip { text = String(text.drop { $0.isWhitespace }) }
                    if at(j + 2) == "-" {
                        while let last = text.unicodeScalars.last, last.properties.isWhitespace {
                            text.unicodeScalars.removeLast()
                        }
                    }
                    out.append(.text(text))
                    i = k + 6
                    let (_, endStrip, endKeep) = try expressionTokens(closer: "%}", line: line)
                    if !endStrip && !endKeep && at(i) == "\n" { i += 1 }
                    if endStrip { while let c = at(i), c.properties.isWhitespace { i += 1 } }
                    return
                }
            }
            j += 1
        }
        throw JinjaError.syntax("missing endraw", line: line)
    }

    private func findCommentEnd() -> (start: Int, after: Int, strip: Bool, keep: Bool)? {
        var j = i
        while j + 1 < s.count {
            if s[j] == "#" && s[j + 1] == "}" {
                let strip = j > i && s[j - 1] == "-"
                let keep = j > i && s[j - 1] == "+"
                return (j, j + 2, strip, keep)
            }
            j += 1
        }
        return nil
    }

    /// The tokens up to `closer` (outside brackets); whether the tag ended with `-` (strip what follows) or `+`.
    private mutating func expressionTokens(closer: String, line tagLine: Int) throws -> ([JinjaToken], Bool, Bool) {
        var tokens: [JinjaToken] = []
        var depth = 0
        while true {
            while let c = at(i), c == " " || c == "\t" || c == "\n" || c == "\r" {
                if c == "\n" { line += 1 }
                i += 1
            }
            guard let c = at(i) else { throw JinjaError.syntax("missing '\(closer)'", line: tagLine) }
            if depth == 0 {
                if starts(closer, at: i) {
                    i += 2
                    return (tokens, false, false)
                }
                if (c == "-" || c == "+") && starts(closer, at: i + 1) {
                    i += 3
                    if c == "-" {
                        while let w = at(i), w.properties.isWhitespace {
                            if w == "\n" { line += 1 }
                            i += 1
                        }
                    }
                    return (tokens, c == "-", c == "+")
                }
            }
            if c == "'" || c == "\"" {
                tokens.append(.string(try stringLiteral(quote: c, line: tagLine)))
            } else if c.properties.isAlphabetic || c == "_" {
                var j = i
                while let d = at(j), d.properties.isAlphabetic || d == "_" || ("0"..."9").contains(d) { j += 1 }
                tokens.append(.name(String(String.UnicodeScalarView(s[i..<j]))))
                i = j
            } else if ("0"..."9").contains(c) {
                tokens.append(number())
            } else {
                let ops = [
                    "//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")",
                    "[", "]", "{", "}", ",", ".", ":", "|",
                ]
                guard let op = ops.first(where: { starts($0, at: i) }) else {
                    throw JinjaError.syntax("unexpected character '\(c)'", line: tagLine)
                }
                if op == "(" || op == "[" || op == "{" { depth += 1 }
                if op == ")" || op == "]" || op == "}" { depth -= 1 }
                tokens.append(.op(op))
                i += op.unicodeScalars.count
            }
        }
    }

    private mutating func number() -> JinjaToken {
        var j = i
        var isFloat = false
        while let d = at(j), ("0"..."9").contains(d) || d == "_" { j += 1 }
        if at(j) == ".", let d = at(j + 1), ("0"..."9").contains(d) {
            isFloat = true
            j += 1
            while let d = at(j), ("0"..."9").contains(d) || d == "_" { j += 1 }
        }
        if let e = at(j), e == "e" || e == "E" {
            var k = j + 1
            if let sign = at(k), sign == "+" || sign == "-" { k += 1 }
            if let d = at(k), ("0"..."9").contains(d) {
                isFloat = true
                j = k
                while let d = at(j), ("0"..."9").contains(d) { j += 1 }
            }
        }
        let text = String(String.UnicodeScalarView(s[i..<j])).replacingOccurrences(of: "_", with: "")
        i = j
        if !isFloat, let n = Int(text) { return .int(n) }
        return .double(Double(text) ?? 0)
    }

    /// A quoted string with Python's backslash escapes.
    private mutating func stringLiteral(quote: Unicode.Scalar, line tagLine: Int) throws -> String {
        var out = String.UnicodeScalarView()
        i += 1
        while let c = at(i) {
            i += 1
            if c == quote { return String(out) }
            if c == "\n" { line += 1 }
            guard c == "\\", let e = at(i) else {
                out.append(c)
                continue
            }
            i += 1
            switch e {
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "\\": out.append("\\")
            case "'": out.append("'")
            case "\"": out.append("\"")
            case "0": out.append("\0")
            case "a": out.append("\u{07}")
            case "b": out.append("\u{08}")
            case "f": out.append("\u{0C}")
            case "v": out.append("\u{0B}")
            case "\n": break
            case "x", "u", "U":
                let width = e == "x" ? 2 : e == "u" ? 4 : 8
                let digits = String(String.UnicodeScalarView(s[i..<min(s.count, i + width)]))
                guard digits.unicodeScalars.count == width, let v = UInt32(digits, radix: 16),
                    let scalar = Unicode.Scalar(v)
                else { throw JinjaError.syntax("bad \\\(e) escape in a string", line: tagLine) }
                out.append(scalar)
                i += width
            default:
                out.append("\\")
                out.append(e)
            }
        }
        throw JinjaError.syntax("unterminated string", line: tagLine)
    }
}
