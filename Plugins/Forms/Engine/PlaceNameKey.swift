import Foundation
import SanadChat

/// A place name as compared (countries, US states): Arabic letter forms and marks folded (`normalizeArabic`), case
/// and accents folded, punctuation dropped, and articles dropped (`the`, `of`, `de`, `la`, `el`, and `ال` at the
/// start of a word), so `السّويد`, `السويد` and `سويد`, or `México` and `mexico`, are one key.
func placeNameKey(_ text: String) -> String {
    let folded = normalizeArabic(text).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    var words: [Substring] = []
    for word in folded.split(whereSeparator: { !$0.isLetter && !$0.isNumber }) {
        if placeNameArticles.contains(String(word)) { continue }
        words.append(word.hasPrefix("ال") && word.count > 3 ? word.dropFirst(2) : word)
    }
    return words.joined(separator: " ")
}

private let placeNameArticles: Set<String> = ["the", "of", "de", "la", "el", "del"]
