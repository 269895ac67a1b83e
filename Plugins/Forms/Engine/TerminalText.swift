/// Text that reaches a terminal: answers, ids and file names can hold control characters (ESC starts a terminal
/// escape sequence, OSC can rewrite the title or a link) or bidirectional overrides that reorder what is shown.
public enum TerminalText {
    /// `text` with every control character (C0, DEL, C1) and bidirectional control written as `\u{…}`, and the
    /// backslash doubled so an escaped form cannot be faked; everything else, any script, is kept.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out += scalar == "\\" ? "\\\\" : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `'text'` escaped and, past 64 characters, cut with the full length said.
    public static func quoted(_ text: String, limit: Int = 64) -> String {
        let shown = text.count > limit ? String(text.prefix(limit)) + "…" : text
        return "'\(escaped(shown))'" + (text.count > limit ? " (\(text.count) characters)" : "")
    }

    /// Whether `scalar` is a control character (answers may not hold them; see `FieldValidator`).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `scalar` is a bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069): invisible,
    /// they reorder what follows them on screen ("Trojan Source"), so answers may not hold them either. The marks
    /// U+200E and U+200F, which Arabic text uses, are allowed (and escaped when printed).
    public static func isDirectionControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || scalar == "\\" || isDirectionControl(scalar) || scalar.value == 0x200E
            || scalar.value == 0x200F
    }
}
