import Foundation
import SanadNative

/// A small, correct PDF 1.4 writer for text documents: US Letter pages, headings in bold, long lines wrapped at
/// spaces, a page footer, and a cross-reference table with exact byte offsets. `pdftotext` reads the text back.
///
/// Text in any script: the lines are shaped by HarfBuzz (Arabic letters joined, lam-alef ligatures) in an embedded
/// subset of DejaVu Sans (`EmbeddedFont`: Type0/CIDFontType2, Identity-H, a ToUnicode map), laid out right to left
/// where a line's first letter is Arabic (`BidiLine`: Latin words and numbers inside keep their order), and wrapped
/// by measured advance widths. Where HarfBuzz or the font cannot be used, the document falls back to Courier (a
/// standard-14 font, nothing embedded, WinAnsiEncoding): characters outside WinAnsi are written as "?", counted in
/// `unrepresentable`, and `note` says why and what to install.
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

    /// Which fonts a document is written with.
    public enum Fonts: Sendable {
        /// TrueType files embedded as subsets, shaped with HarfBuzz found through `environment`
        /// (`SANAD_HARFBUZZ`, `SANAD_HARFBUZZ_SUBSET`).
        case embedded(regular: String, bold: String, environment: [String: String])
        /// Courier and Courier-Bold, Latin only.
        case courier

        /// DejaVu Sans and DejaVu Sans Bold from Debian's `fonts-dejavu-core` (they have the Arabic ranges).
        public static var system: Fonts {
            .embedded(
                regular: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                bold: "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
                environment: ProcessInfo.processInfo.environment)
        }
    }

    /// A written document.
    public struct Output: Sendable {
        public var bytes: [UInt8]
        /// Characters no glyph could show ("?" in Courier, an empty box in an embedded font).
        public var unrepresentable: Int
        /// Why the document fell back to Courier (naming the package to install), or nil.
        public var note: String?
    }

    public var title: String
    public var lines: [Line]
    /// The document's language (a BCP 47 tag: `en`, `ar`, `es`): shaping, and the footer's words.
    public var language: String

    public init(title: String, lines: [Line], language: String = "en") {
        self.title = title
        self.lines = lines
        self.language = language
    }

    static let pageWidth = 612
    static let pageHeight = 792
    static let margin = 54
    static let fontSize = 10
    static let leading = 13
    /// Characters per line: Courier's advance is 0.6 em.
    static let columns = (pageWidth - 2 * margin) * 10 / (6 * fontSize)
    static let linesPerPage = (pageHeight - 2 * margin - 2 * leading) / leading

    /// The document written with `fonts`; with embedded fonts that cannot be used, with Courier and a note.
    public func render(fonts: Fonts = .system) -> Output {
        guard case .embedded(let regular, let bold, let environment) = fonts else { return renderCourier(note: nil) }
        do {
            let hb = try HarfBuzzLibrary.load(environment: environment).get()
            let subsetter = try HarfBuzzSubsetter.load(environment: environment).get()
            let fontFiles = FileManager.default.fileExists(atPath: bold) ? [regular, bold] : [regular, regular]
            let faces = try fontFiles.map { try EmbeddedFont(file: $0, library: hb, subsetter: subsetter) }
            let deflate = try? ZlibLibrary.load(environment: environment).get()  // without zlib: plain streams
            return try renderEmbedded(regular: faces[0], bold: faces[1], deflate: deflate)
        } catch {
            return renderCourier(
                note: "the PDFs use the Latin-only Courier font: \(error). "
                    + "(The fonts are Debian's fonts-dejavu-core; scripts/setup installs them and HarfBuzz.)")
        }
    }

    /// Courier pages: each line in WinAnsiEncoding, wrapped at `columns` characters.
    func renderCourier(note: String?) -> Output {
        var unrepresentable = 0
        var rows: [(bold: Bool, bytes: [UInt8])] = []
        for line in lines {
            let (encoded, lost) = winAnsi(line.text)
            unrepresentable += lost
            for (i, piece) in wrap(encoded, columns: Self.columns).enumerated() {
                rows.append((line.style != .body, i == 0 ? piece : Array("  ".utf8) + piece))
            }
        }
        let pages = paged(rows)
        let contents = pages.enumerated().map { n, page in
            var content: [UInt8] = []
            var y = Self.pageHeight - Self.margin - Self.leading
            for row in page {
                content += Array("BT /\(row.bold ? "F2" : "F1") \(Self.fontSize) Tf \(Self.margin) \(y) Td (".utf8)
                content += escaped(row.bytes) + Array(") Tj ET\n".utf8)
                y -= Self.leading
            }
            content += Array("BT /F1 8 Tf \(Self.margin) \(Self.margin / 2) Td (".utf8)
            content += escaped(winAnsi(footer(page: n + 1, of: pages.count)).bytes) + Array(") Tj ET\n".utf8)
            return content
        }
        let bytes = assemblePDF(
            pages: contents,
            fonts: { add in
                [
                    "F1": add(
                        Array("<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>".utf8)),
                    "F2": add(
                        Array(
                            "<< /Type /Font /Subtype /Type1 /BaseFont /Courier-Bold /Encoding /WinAnsiEncoding >>".utf8)
                    ),
                ]
            }, title: Array("(".utf8) + escaped(winAnsi(title).bytes) + Array(")".utf8))
        return Output(bytes: bytes, unrepresentable: unrepresentable, note: note)
    }

    /// Pages of shaped text in the embedded fonts: each line laid out by `LaidOutLine`, wrapped by its measured
    /// width, right-aligned when it reads right to left; the streams deflated with zlib when it is there.
    func renderEmbedded(regular: EmbeddedFont, bold: EmbeddedFont, deflate: ZlibLibrary?) throws -> Output {
        let width = Double(Self.pageWidth - 2 * Self.margin)
        let indent = 12.0
        var rows: [(font: EmbeddedFont, line: LaidOutLine, indent: Double)] = []
        for line in lines {
            let font = line.style == .body ? regular : bold
            let pieces = wrappedLines(
                Array(line.text.unicodeScalars), font: font, size: Double(Self.fontSize), language: language,
                width: width, continuationIndent: indent)
            rows += pieces.enumerated().map { (font, $1, $0 == 0 ? 0 : indent) }
        }
        let pages = paged(rows)
        var unrepresentable = rows.reduce(0) { $0 + $1.line.missing }
        var contents: [[UInt8]] = []
        for (n, page) in pages.enumerated() {
            var content: [UInt8] = []
            var y = Self.pageHeight - Self.margin - Self.leading
            for row in page {
                content += row.line.content(
                    fontName: row.font === regular ? "F1" : "F2", size: Double(Self.fontSize), y: Double(y),
                    left: Double(Self.margin) + (row.line.rightToLeft ? 0 : row.indent),
                    right: Double(Self.pageWidth - Self.margin) - (row.line.rightToLeft ? row.indent : 0))
                y -= Self.leading
            }
            let foot = LaidOutLine(
                Array(footer(page: n + 1, of: pages.count).unicodeScalars), font: regular, size: 8, language: language)
            unrepresentable += foot.missing
            content += foot.content(
                fontName: "F1", size: 8, y: Double(Self.margin / 2), left: Double(Self.margin),
                right: Double(Self.pageWidth - Self.margin))
            contents.append(content)
        }
        var failure: (any Error)?
        let bytes = assemblePDF(
            pages: contents,
            fonts: { add in
                do {
                    let f1 = try regular.pdfObjects(add: add, deflate: deflate)
                    return ["F1": f1, "F2": regular === bold ? f1 : try bold.pdfObjects(add: add, deflate: deflate)]
                } catch {
                    failure = error
                    return [:]
                }
            }, title: Array("<\(utf16Hex(title))>".utf8), deflate: deflate)
        if let failure { throw failure }
        return Output(bytes: bytes, unrepresentable: unrepresentable, note: nil)
    }

    /// `rows` cut into pages of `linesPerPage` (one empty page for none).
    func paged<Row>(_ rows: [Row]) -> [[Row]] {
        stride(from: 0, to: max(rows.count, 1), by: Self.linesPerPage).map {
            Array(rows[$0..<min($0 + Self.linesPerPage, rows.count)])
        }
    }

    /// `Title - page 2 of 3`, in the document's language.
    func footer(page: Int, of count: Int) -> String {
        switch language {
        case "ar": return "\(title) - صفحة \(page) من \(count)"
        case "es": return "\(title) - página \(page) de \(count)"
        default: return "\(title) - page \(page) of \(count)"
        }
    }
}

/// A whole PDF file: the catalog, the page tree, one page per content stream with the fonts `fonts` adds (resource
/// name → object number), the document information with `title` (a PDF string, written as is), and the
/// cross-reference table with each object's byte offset. The content streams are deflated when `deflate` is given.
func assemblePDF(
    pages: [[UInt8]], fonts: (_ add: ([UInt8]) -> Int) -> [String: Int], title: [UInt8], deflate: ZlibLibrary? = nil
) -> [UInt8] {
    var objects: [[UInt8]] = []
    func add(_ body: [UInt8]) -> Int {
        objects.append(body)
        return objects.count
    }
    let catalog = add([])  // filled in once the page tree's number is known
    let tree = add([])
    let resources = fonts(add).sorted { $0.key < $1.key }.map { "/\($0.key) \($0.value) 0 R" }.joined(separator: " ")
    var kids: [Int] = []
    for content in pages {
        let contents = add(pdfStream(content, deflate: deflate))
        kids.append(
            add(
                Array(
                    ("<< /Type /Page /Parent \(tree) 0 R /MediaBox [0 0 \(TextPDF.pageWidth) \(TextPDF.pageHeight)] "
                        + "/Resources << /Font << \(resources) >> >> /Contents \(contents) 0 R >>").utf8)))
    }
    objects[catalog - 1] = Array("<< /Type /Catalog /Pages \(tree) 0 R >>".utf8)
    objects[tree - 1] = Array(
        "<< /Type /Pages /Kids [\(kids.map { "\($0) 0 R" }.joined(separator: " "))] /Count \(kids.count) >>".utf8)
    let info = add(Array("<< /Title ".utf8) + title + Array(" /Producer (Sanad) >>".utf8))

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
    return out
}

/// A stream object: `entries` (` /Length1 N`) after its `/Length`, deflated (`/FlateDecode`) when `deflate` is given
/// and it works.
func pdfStream(_ body: [UInt8], entries: String = "", deflate: ZlibLibrary?) -> [UInt8] {
    if let packed = deflate?.deflate(body) {
        return Array("<< /Length \(packed.count)\(entries) /Filter /FlateDecode >>\nstream\n".utf8) + packed
            + Array("\nendstream".utf8)
    }
    return Array("<< /Length \(body.count)\(entries) >>\nstream\n".utf8) + body + Array("\nendstream".utf8)
}

/// `text` as a PDF text string in hexadecimal: UTF-16BE after a byte-order mark.
func utf16Hex(_ text: String) -> String {
    "FEFF" + text.utf16.map { zeroPadded(String($0, radix: 16, uppercase: true), 4) }.joined()
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
