/// A small, correct PDF 1.4 writer for text documents: US Letter pages of Courier (a standard-14 font, so nothing is
/// embedded and every reader has it), WinAnsiEncoding, headings in Courier-Bold, long lines wrapped at spaces, a
/// page footer, and a cross-reference table with exact byte offsets. `pdftotext` reads the text back.
///
/// Courier is monospaced (600/1000 em), so a line's width is exact without font metrics. Characters outside
/// WinAnsiEncoding (Arabic, for example) cannot be shown by a standard-14 font: they are written as "?" and counted
/// in `unrepresentable`, so the caller can say so.
public struct TextPDF: Sendable {
    public enum Style: Sendable { case title, heading, body }

    public struct Line: Sendable {
        public var style: Style
        public var text: String

        public init(_ style: Style, _ text: String) {
            self.style = style
            self.text = text
        }
    }

    public var title: String
    public var lines: [Line]

    public init(title: String, lines: [Line]) {
        self.title = title
        self.lines = lines
    }

    static let pageWidth = 612
    static let pageHeight = 792
    static let margin = 54
    static let fontSize = 10
    static let leading = 13
    /// Characters per line: Courier's advance is 0.6 em.
    static let columns = (pageWidth - 2 * margin) * 10 / (6 * fontSize)
    static let linesPerPage = (pageHeight - 2 * margin - 2 * leading) / leading

    /// The document's bytes, and how many characters had to be written as "?".
    public func render() -> (bytes: [UInt8], unrepresentable: Int) {
        var unrepresentable = 0
        var rows: [(bold: Bool, bytes: [UInt8])] = []
        for line in lines {
            let (encoded, lost) = winAnsi(line.text)
            unrepresentable += lost
            for (i, piece) in wrap(encoded, columns: Self.columns).enumerated() {
                rows.append((line.style != .body, i == 0 ? piece : Array("  ".utf8) + piece))
            }
        }
        let pages = stride(from: 0, to: max(rows.count, 1), by: Self.linesPerPage).map {
            Array(rows[$0..<min($0 + Self.linesPerPage, rows.count)])
        }
        var objects: [[UInt8]] = []
        func add(_ text: String) -> Int {
            objects.append(Array(text.utf8))
            return objects.count
        }
        let catalog = add("")  // filled in once the page tree's number is known
        let regular = add("<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>")
        let bold = add("<< /Type /Font /Subtype /Type1 /BaseFont /Courier-Bold /Encoding /WinAnsiEncoding >>")
        let tree = add("")
        var kids: [Int] = []
        for (n, page) in pages.enumerated() {
            var content: [UInt8] = []
            var y = Self.pageHeight - Self.margin - Self.leading
            for row in page {
                content += Array("BT /\(row.bold ? "F2" : "F1") \(Self.fontSize) Tf \(Self.margin) \(y) Td (".utf8)
                content += escaped(row.bytes) + Array(") Tj ET\n".utf8)
                y -= Self.leading
            }
            let footer = Array("\(title) - page \(n + 1) of \(pages.count)".utf8)
            content += Array("BT /F1 8 Tf \(Self.margin) \(Self.margin / 2) Td (".utf8)
            content += escaped(winAnsi(String(decoding: footer, as: UTF8.self)).bytes) + Array(") Tj ET\n".utf8)
            objects.append(Array("<< /Length \(content.count) >>\nstream\n".utf8) + content + Array("endstream".utf8))
            let contents = objects.count
            kids.append(
                add(
                    "<< /Type /Page /Parent \(tree) 0 R /MediaBox [0 0 \(Self.pageWidth) \(Self.pageHeight)] "
                        + "/Resources << /Font << /F1 \(regular) 0 R /F2 \(bold) 0 R >> >> /Contents \(contents) 0 R >>"
                ))
        }
        objects[catalog - 1] = Array("<< /Type /Catalog /Pages \(tree) 0 R >>".utf8)
        objects[tree - 1] = Array(
            "<< /Type /Pages /Kids [\(kids.map { "\($0) 0 R" }.joined(separator: " "))] /Count \(kids.count) >>".utf8)
        let info = objects.count + 1
        objects.append(Array("<< /Title (".utf8) + escaped(winAnsi(title).bytes) + Array(") /Producer (Sanad) >>".utf8))

        var out = Array("%PDF-1.4\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".unicodeScalars.map { UInt8($0.value) })
        var offsets: [Int] = []
        for (i, body) in objects.enumerated() {
            offsets.append(out.count)
            out += Array("\(i + 1) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        let xref = out.count
        out += Array("xref\n0 \(objects.count + 1)\n0000000000 65535 f \n".utf8)
        for offset in offsets { out += Array((zeroPadded("\(offset)", 10) + " 00000 n \n").utf8) }
        out += Array(
            "trailer\n<< /Size \(objects.count + 1) /Root \(catalog) 0 R /Info \(info) 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
                .utf8)
        return (out, unrepresentable)
    }
}

/// `text` in WinAnsiEncoding (Latin-1 plus the typographic characters of 0x80–0x9F); any other character becomes
/// "?" and is counted.
func winAnsi(_ text: String) -> (bytes: [UInt8], lost: Int) {
    let extra: [UInt32: UInt8] = [
        0x20AC: 0x80, 0x201A: 0x82, 0x0192: 0x83, 0x201E: 0x84, 0x2026: 0x85, 0x2020: 0x86, 0x2021: 0x87,
        0x02C6: 0x88, 0x2030: 0x89, 0x0160: 0x8A, 0x2039: 0x8B, 0x0152: 0x8C, 0x017D: 0x8E, 0x2018: 0x91,
        0x2019: 0x92, 0x201C: 0x93, 0x201D: 0x94, 0x2022: 0x95, 0x2013: 0x96, 0x2014: 0x97, 0x02DC: 0x98,
        0x2122: 0x99, 0x0161: 0x9A, 0x203A: 0x9B, 0x0153: 0x9C, 0x017E: 0x9E, 0x0178: 0x9F,
    ]
    var bytes: [UInt8] = []
    var lost = 0
    for scalar in text.unicodeScalars {
        let v = scalar.value
        if (0x20...0x7E).contains(v) || (0xA0...0xFF).contains(v) {
            bytes.append(UInt8(v))
        } else if let b = extra[v] {
            bytes.append(b)
        } else if v == 0x09 {
            bytes.append(0x20)
        } else if (0x0300...0x036F).contains(v) || v == 0x200E || v == 0x200F {
            continue  // combining marks and direction marks carry no glyph of their own here
        } else {
            bytes.append(UInt8(ascii: "?"))
            lost += 1
        }
    }
    return (bytes, lost)
}

/// A PDF literal string's body: `(`, `)` and `\` escaped, bytes outside printable ASCII as octal escapes.
func escaped(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    for b in bytes {
        switch b {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), b]
        case 0x20...0x7E: out.append(b)
        default:
            out += Array(("\\" + zeroPadded(String(b, radix: 8), 3)).utf8)
        }
    }
    return out
}

/// Splits a line into pieces of at most `columns` bytes, at the last space where there is one (continuation pieces
/// leave room for a two-space indent).
func wrap(_ line: [UInt8], columns: Int) -> [[UInt8]] {
    var pieces: [[UInt8]] = []
    var rest = line[...]
    var width = columns
    while rest.count > width {
        let window = rest.prefix(width + 1)
        let cut = window.lastIndex(of: UInt8(ascii: " ")).flatMap { $0 > rest.startIndex ? $0 : nil }
        if let cut {
            pieces.append(Array(rest[..<cut]))
            rest = rest[(cut + 1)...]
        } else {
            pieces.append(Array(rest.prefix(width)))
            rest = rest.dropFirst(width)
        }
        width = columns - 2
    }
    pieces.append(Array(rest))
    return pieces
}

func zeroPadded(_ digits: String, _ width: Int) -> String {
    String(repeating: "0", count: max(0, width - digits.count)) + digits
}
