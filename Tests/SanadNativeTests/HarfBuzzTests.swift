import Foundation
import SanadNative
import Testing

/// HarfBuzz through dlopen: Arabic shaped into joined forms and the lam-alef ligature, a subset that keeps glyph
/// ids, and a clear refusal naming the package when the library is missing.
@Suite("HarfBuzz through dlopen")
struct HarfBuzzTests {
    static let dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

    static func font() throws -> HarfBuzzFont? {
        guard let data = FileManager.default.contents(atPath: dejaVu) else { return nil }  // fonts-dejavu-core
        return try HarfBuzzFont(library: try HarfBuzzLibrary.load().get(), bytes: [UInt8](data), name: dejaVu)
    }

    static func scalars(_ s: String) -> [UInt32] { s.unicodeScalars.map(\.value) }

    @Test("Arabic is shaped: joined forms differ from isolated ones, lam-alef is one glyph, glyphs run right to left")
    func shapesArabic() throws {
        let library = try HarfBuzzLibrary.load().get()
        #expect(library.version.first?.isNumber == true && library.path.contains("harfbuzz"))
        guard let font = try Self.font() else { return }
        #expect(font.unitsPerEm == 2048)
        let joined = font.shape(Self.scalars("محمد"), rightToLeft: true, language: "ar")
        let isolated = Self.scalars("محمد").map { font.shape([$0], rightToLeft: true, language: "ar")[0].glyph }
        #expect(joined.count == 4 && !joined.contains { $0.glyph == 0 })
        #expect(joined.map(\.cluster) == [3, 2, 1, 0], "visual order: the last letter is drawn first (leftmost)")
        #expect(Array(joined.map(\.glyph).reversed()) != isolated, "initial, medial and final forms, not isolated")
        #expect(joined[3].glyph != isolated[0] && joined[0].glyph != isolated[3])
        let lamAlef = font.shape(Self.scalars("لا"), rightToLeft: true, language: "ar")
        #expect(lamAlef.count == 1 && lamAlef[0].cluster == 0, "the lam-alef ligature")
        let latin = font.shape(Self.scalars("Ab"), rightToLeft: false, language: "en")
        #expect(latin.map(\.cluster) == [0, 1] && latin.allSatisfy { $0.xAdvance == Int32(font.advance($0.glyph)) })
    }

    @Test("the subset keeps the glyph ids it was given and is much smaller than the font")
    func subsets() throws {
        guard let font = try Self.font() else { return }
        let subsetter = try HarfBuzzSubsetter.load().get()
        let glyphs = Set(font.shape(Self.scalars("محمد Maria"), rightToLeft: true, language: "ar").map(\.glyph))
        let subset = try subsetter.subset(font, glyphs: glyphs, unicodes: [], name: Self.dejaVu)
        let size = try #require(FileManager.default.attributesOfItem(atPath: Self.dejaVu)[.size] as? Int)
        #expect(subset.count < size / 4, "\(subset.count) of \(size) bytes")
        let cut = try HarfBuzzFont(library: font.library, bytes: subset, name: "subset")
        for g in glyphs { #expect(cut.advance(g) == font.advance(g), "glyph \(g) kept its id and width") }
    }

    @Test("a missing HarfBuzz is refused with the package to install")
    func missing() {
        let result = HarfBuzzLibrary.load(environment: ["SANAD_HARFBUZZ": "/nonexistent/libharfbuzz.so.0"])
        guard case .failure(let error) = result else {
            Issue.record("a missing file was accepted")
            return
        }
        #expect(error.reason.contains("/nonexistent/libharfbuzz.so.0") && error.reason.contains("libharfbuzz0b"))
    }
}

/// zlib through dlopen, for the PDFs' `/FlateDecode` streams.
@Suite("zlib through dlopen")
struct ZlibTests {
    @Test("deflate and inflate round trip; a missing zlib is refused with the package to install")
    func roundTrip() throws {
        let zlib = try ZlibLibrary.load().get()
        let text = Array((0..<2000).map { "line \($0) of a PDF content stream\n" }.joined().utf8)
        let packed = try #require(zlib.deflate(text))
        #expect(packed.count < text.count / 4 && packed.first == 0x78, "the zlib format (RFC 1950)")
        #expect(zlib.inflate(packed, size: text.count) == text)
        #expect(zlib.inflate(packed, size: text.count - 1) == nil)
        guard case .failure(let error) = ZlibLibrary.load(environment: ["SANAD_ZLIB": "/nonexistent/libz.so.1"]) else {
            Issue.record("a missing file was accepted")
            return
        }
        #expect(error.reason.contains("zlib1g"))
    }
}
