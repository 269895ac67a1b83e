import Foundation
import SanadTestSupport
import Testing

/// Every flag a command's `--help` lists is one the command accepts (issue 45): for each command in `sanad --help`,
/// each flag of its help is given (with a value where the help shows one) followed by a flag no command has; the
/// command must stop at that one, never at the listed flag with "unknown option". A command made of verbs is tried
/// verb by verb: a flag on a verb's usage line must be accepted by that verb, and every flag of the Options list by
/// at least one verb.
@Suite("every flag a help lists is accepted", .enabled(if: SanadCLI.executable != nil))
struct HelpFlagsTests {
    static let notAFlag = "--zz-not-a-flag"

    /// A flag as the help shows it, with the value it takes (nil: a switch).
    struct Flag: Hashable, CustomStringConvertible {
        var name: String
        var placeholder: String?
        var description: String { name + (placeholder.map { " " + $0 } ?? "") }

        /// A value of the placeholder's kind: a number, the first listed choice, `k=v`, else a word.
        var arguments: [String] {
            guard let placeholder else { return [name] }
            if placeholder.contains("|") { return [name, String(placeholder.split(separator: "|")[0])] }
            if placeholder.contains("=") { return [name, "k=v"] }
            if placeholder.contains(",") && placeholder.first == "P" { return [name, "1,1"] }
            let numeric = ["N", "K", "S", "REPS", "THREADS", "BATCH", "PORT", "SECONDS", "MS", "BYTES", "COUNT"]
            if numeric.contains(where: { placeholder.hasPrefix($0) }) { return [name, "1"] }
            return [name, "x"]
        }
    }

    /// The flags of one line of a help text: `-m, --model LIST  text` in an Options list, or `[--json]`,
    /// `--db CONNINFO` in a usage line; `required` are those outside brackets.
    static func flags(inLine line: String) -> [Flag] { parse(line).map(\.flag) }

    static func requiredFlags(inLine line: String) -> [Flag] { parse(line).filter(\.required).map(\.flag) }

    private static func parse(_ line: String) -> [(flag: Flag, required: Bool)] {
        // Each word with the bracket depth it starts at.
        var words: [(text: String, depth: Int)] = []
        var depth = 0
        var current = ""
        var start = 0
        for ch in line + " " {
            if ch == "[" || ch == "]" || ch == " " {
                if !current.isEmpty { words.append((current, start)) }
                current = ""
                depth += ch == "[" ? 1 : ch == "]" ? -1 : 0
            } else {
                if current.isEmpty { start = depth }
                current.append(ch)
            }
        }
        var found: [(flag: Flag, required: Bool)] = []
        for (i, (word, depth)) in words.enumerated() where word.hasPrefix("-") && word.count > 1 {
            let name = word.hasSuffix(",") ? String(word.dropLast()) : word
            guard name.dropFirst().allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }), name != "--", name != "-h",
                name != "--help"
            else { continue }
            let next = i + 1 < words.count ? words[i + 1].text : nil
            let takesValue =
                !word.hasSuffix(",") && next.map { !$0.hasPrefix("-") && $0.first?.isUppercase == true } ?? false
                || (next.map { $0.contains("|") && !$0.hasPrefix("-") } ?? false)
            found.append((Flag(name: name, placeholder: takesValue ? next : nil), depth == 0))
        }
        // `-m, --model LIST`: the short name takes what the long one takes.
        for i in found.indices.reversed() where i + 1 < found.count && found[i].flag.placeholder == nil {
            if line.contains(found[i].flag.name + ", " + found[i + 1].flag.name) {
                found[i].flag.placeholder = found[i + 1].flag.placeholder
            }
        }
        return found
    }

    /// The Options list's flags: lines that start with two or more spaces and a dash.
    static func optionFlags(_ help: String) -> Set<Flag> {
        var flags = Set<Flag>()
        for line in help.split(separator: "\n").map(String.init) {
            let trimmed = line.drop { $0 == " " }
            guard line.count - trimmed.count >= 2, trimmed.hasPrefix("-") else { continue }
            // Only the flag column: up to the first run of two spaces.
            let column = trimmed.components(separatedBy: "  ").first ?? ""
            flags.formUnion(Self.flags(inLine: column))
        }
        return flags
    }

    /// `sanad COMMAND VERB …` usage lines: the verb and the flags on its line.
    static func verbs(_ help: String, command: String) -> [(verb: String, flags: [Flag], required: [Flag])] {
        var out: [(String, [Flag], [Flag])] = []
        for line in help.split(separator: "\n").map(String.init) {
            guard let range = line.range(of: "sanad \(command) ") else { continue }
            let rest = line[range.upperBound...]
            guard let verb = rest.split(separator: " ").first.map(String.init),
                verb.allSatisfy({ $0.isLowercase || $0 == "-" }), !verb.hasPrefix("-")
            else { continue }
            // `list | sessions [--json]`: each verb of the alternatives.
            let alternatives = rest.components(separatedBy: " | ")
            if alternatives.count > 1 {
                for alternative in alternatives {
                    let words = alternative.split(separator: " ").map(String.init)
                    guard let v = words.first, v.allSatisfy({ $0.isLowercase }) else { continue }
                    out.append((v, flags(inLine: alternative), requiredFlags(inLine: alternative)))
                }
            } else {
                out.append((verb, flags(inLine: String(rest)), requiredFlags(inLine: String(rest))))
            }
        }
        return out
    }

    /// Runs `sanad arguments… --zz-not-a-flag` (20 s at most) and says what went wrong, or nil when the command
    /// stopped at that flag or at a value it checks, never at `flag`.
    static func refusal(of flag: Flag, _ arguments: [String]) throws -> String? {
        let executable = try #require(SanadCLI.executable)
        let r = try runChildProcess(
            URL(fileURLWithPath: "/usr/bin/timeout"), ["20", executable.path] + arguments + [Self.notAFlag],
            stdin: Data(),
            environment: ProcessInfo.processInfo.environment.merging(["SANAD_DATA": scratch.path]) {
                $1
            }, directory: TestPaths.packageRoot)
        let stderr = String(decoding: r.stderr, as: UTF8.self)
        if stderr.contains("unknown option '\(flag.name)'") { return "refused \(flag.name): \(stderr.prefix(200))" }
        if r.status == 124 { return "ran past 20 s instead of refusing \(Self.notAFlag)" }
        return nil
    }

    static let scratch: URL = FileManager.default.temporaryDirectory.appendingPathComponent(
        "sanad-help-flags-\(getpid())")

    static func commands() throws -> [String] {
        let top = try SanadCLI.run(["--help"]).stdout
        guard let start = top.range(of: "Commands:\n") else { return [] }
        return top[start.upperBound...].split(separator: "\n").prefix { $0.hasPrefix("  ") }.compactMap {
            $0.split(separator: " ").first.map(String.init)
        }
    }

    @Test("the help parser reads flags, their values and what a usage line requires")
    func parser() {
        #expect(Self.flags(inLine: "-m, --model LIST").map(\.description) == ["-m LIST", "--model LIST"])
        #expect(Self.flags(inLine: "--json").map(\.description) == ["--json"])
        let usage = "Usage: sanad index add|query|list|remove --index FILE [options] [--json] [-k N]"
        #expect(Self.requiredFlags(inLine: usage).map(\.description) == ["--index FILE"])
        #expect(Self.flags(inLine: usage).map(\.description) == ["--index FILE", "--json", "-k N"])
        #expect(Self.flags(inLine: "[--kind auto|mrz|aamva]").first?.arguments == ["--kind", "auto"])
    }

    @Test("each command accepts the flags its --help lists", arguments: try commands())
    func command(_ command: String) throws {
        let full = try SanadCLI.run([command, "--help"]).stdout
        #expect(full.contains("Usage: sanad \(command)"), "\(command) --help")
        // The examples show flags with sample values; the usage lines and the Options list are what is promised.
        let help = full.components(separatedBy: "\nExamples:").first ?? full
        #expect(!Self.optionFlags(help).isEmpty, "\(command) --help lists no flags the parser can read")
        let verbs = Self.verbs(help, command: command)
        if verbs.isEmpty {
            // What the usage line requires (`--index FILE`) goes first, so the command gets to the flag tried.
            let usage = help.split(separator: "\n").first { $0.contains("Usage: sanad \(command)") }.map(String.init)
            let required = usage.map { Self.requiredFlags(inLine: $0) } ?? []
            let base = [command] + required.flatMap(\.arguments)
            for flag in Self.optionFlags(help) {
                if let problem = try Self.refusal(of: flag, base + flag.arguments) {
                    Issue.record("sanad \(command) \(flag): \(problem)")
                }
            }
            return
        }
        var acceptedSomewhere = Set<String>()
        for (verb, flags, required) in verbs {
            let base = [command, verb] + required.flatMap(\.arguments)
            for flag in flags {
                if let problem = try Self.refusal(of: flag, base + flag.arguments) {
                    Issue.record("sanad \(command) \(verb) \(flag): \(problem)")
                } else {
                    acceptedSomewhere.insert(flag.name)
                }
            }
        }
        for flag in Self.optionFlags(help) where !acceptedSomewhere.contains(flag.name) {
            let accepted = try verbs.contains { verb, _, required in
                try Self.refusal(of: flag, [command, verb] + required.flatMap(\.arguments) + flag.arguments) == nil
            }
            #expect(accepted, "no verb of sanad \(command) accepts \(flag), which its --help lists")
        }
    }
}
