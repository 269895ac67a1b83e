import Foundation
import SanadCore

// Helpers that read what commands work on: prompt text, repeatable options, template and seed flags.

/// The text a command works on: the positional argument, standard input for '-', or the file given with -f (from a
/// file or standard input one trailing newline is dropped when `dropTrailingNewline`, as llama.cpp's tools do).
public func promptText(positionals: [String], file: String?, dropTrailingNewline: Bool = false) throws -> String {
    if let file {
        guard positionals.isEmpty else { throw UsageError("give the text either with -f or as an argument, not both") }
        var text = try readText(file)
        if dropTrailingNewline && text.hasSuffix("\n") { text.removeLast() }
        return text
    }
    guard let first = positionals.first else { throw UsageError("missing the text (an argument, -f FILE, or '-')") }
    guard first == "-" else { return first }
    var text = try readText("-")
    if dropTrailingNewline && text.hasSuffix("\n") { text.removeLast() }
    return text
}

/// Reads a UTF-8 text file, or standard input for '-'.
public func readText(_ path: String) throws -> String {
    let data: Data
    if path == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
    } else {
        guard let d = FileManager.default.contents(atPath: path) else {
            throw SanadError.engine("cannot read '\(path)': no such file or not readable")
        }
        data = d
    }
    return String(decoding: data, as: UTF8.self)
}

/// Every value of a repeatable option (`NAME VALUE` or `NAME=VALUE`), in order.
public func repeatedValues(of name: String, in items: [String]) -> [String] {
    var values: [String] = []
    var i = 0
    while i < items.count {
        if items[i] == name, i + 1 < items.count {
            values.append(items[i + 1])
            i += 2
            continue
        }
        if items[i].hasPrefix(name + "=") { values.append(String(items[i].dropFirst(name.count + 1))) }
        i += 1
    }
    return values
}
