//! The tokens of a PGN file: tag pairs, movetext words and results; comments
//! (`{…}`, `;` to the end of the line), variations (`(…)`, nested) and escape
//! lines (`%` in the first column) are skipped.

use thiserror::Error;

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Token<'a> {
    /// `[Name "value"]`, the value unescaped (`\"`, `\\`).
    Tag { name: &'a str, value: String },
    /// A run of movetext that is not whitespace, a comment or a variation: a
    /// move, a move number, a NAG, a result.
    Word(&'a str),
}

/// Why the text could not be split into tokens.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LexError {
    #[error("line {line}: a comment '{{' that is never closed")]
    OpenComment { line: usize },
    #[error("line {line}: a variation '(' that is never closed")]
    OpenVariation { line: usize },
    #[error("line {line}: malformed tag '{text}' (expected [Name \"value\"])")]
    BadTag { line: usize, text: String },
}

/// The tokens of `text` in order. After an unclosed comment or variation
/// nothing follows; after a bad tag, the rest of its line is skipped.
pub(super) struct Lexer<'a> {
    text: &'a str,
    at: usize,
    line: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Lexer<'a> {
        Lexer {
            text: text.strip_prefix('\u{feff}').unwrap_or(text),
            at: 0,
            line: 1,
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn bump(&mut self, c: char) {
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
    }

    /// Skips up to and including `end`; false if the text ends first.
    fn skip_past(&mut self, end: char) -> bool {
        while let Some(c) = self.rest().chars().next() {
            self.bump(c);
            if c == end {
                return true;
            }
        }
        false
    }

    /// Skips a variation whose `(` was just read, comments inside included.
    fn skip_variation(&mut self) -> bool {
        let mut depth = 1;
        while let Some(c) = self.rest().chars().next() {
            self.bump(c);
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return true;
                    }
                }
                '{' if !self.skip_past('}') => return false,
                ';' => {
                    self.skip_past('\n');
                }
                _ => {}
            }
        }
        false
    }

    /// A tag whose `[` was just read.
    fn tag(&mut self, line: usize) -> Result<Token<'a>, LexError> {
        let bad = |lexer: &mut Lexer<'a>, start: usize| {
            let text: String = lexer.text[start..]
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(40)
                .collect();
            lexer.skip_past('\n');
            LexError::BadTag { line, text }
        };
        let start = self.at - 1;
        let rest = self.rest();
        let name_len = rest
            .find(|c: char| c.is_whitespace() || c == '"' || c == ']')
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        self.at += name_len;
        let after_name = self.rest();
        let value_start = after_name.trim_start_matches([' ', '\t']);
        if name.is_empty() || !value_start.starts_with('"') {
            return Err(bad(self, start));
        }
        self.at += after_name.len() - value_start.len() + 1;
        let mut value = String::new();
        loop {
            let Some(c) = self.rest().chars().next() else {
                return Err(bad(self, start));
            };
            self.bump(c);
            match c {
                '"' => break,
                '\\' => match self.rest().chars().next() {
                    Some(e @ ('"' | '\\')) => {
                        self.bump(e);
                        value.push(e);
                    }
                    _ => value.push('\\'),
                },
                '\n' => return Err(bad(self, start)),
                c => value.push(c),
            }
        }
        let after_value = self.rest();
        let close = after_value.trim_start_matches([' ', '\t']);
        if !close.starts_with(']') {
            return Err(bad(self, start));
        }
        self.at += after_value.len() - close.len() + 1;
        Ok(Token::Tag { name, value })
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<Token<'a>, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let at_line_start = self.at == 0 || self.text[..self.at].ends_with('\n');
            let c = self.rest().chars().next()?;
            let line = self.line;
            match c {
                c if c.is_whitespace() => self.bump(c),
                '%' if at_line_start => {
                    self.skip_past('\n');
                }
                ';' => {
                    self.skip_past('\n');
                }
                '{' => {
                    self.bump(c);
                    if !self.skip_past('}') {
                        return Some(Err(LexError::OpenComment { line }));
                    }
                }
                '(' => {
                    self.bump(c);
                    if !self.skip_variation() {
                        return Some(Err(LexError::OpenVariation { line }));
                    }
                }
                '[' => {
                    self.bump(c);
                    return Some(self.tag(line));
                }
                _ => {
                    let rest = self.rest();
                    let len = rest
                        .find(|c: char| c.is_whitespace() || "{}()[];".contains(c))
                        .unwrap_or(rest.len())
                        .max(c.len_utf8());
                    self.at += len;
                    return Some(Ok(Token::Word(&rest[..len])));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<Result<Token<'_>, LexError>> {
        Lexer::new(text).collect()
    }

    fn word(w: &str) -> Result<Token<'_>, LexError> {
        Ok(Token::Word(w))
    }

    #[test]
    fn tags_words_and_skipped_text() {
        let text = "\u{feff}[Event \"a \\\"b\\\" \\\\ c\"]\n[FEN  \"x\" ]\n\n\
                    1. 炮二平五 {a comment\nover lines} 马８进７ ; to the end\n\
                    2. H2+3 (2. C8.5 {inner)} (nested) C8.5) $1 1-0\n%escape line\n*";
        assert_eq!(
            tokens(text),
            vec![
                Ok(Token::Tag {
                    name: "Event",
                    value: "a \"b\" \\ c".into()
                }),
                Ok(Token::Tag {
                    name: "FEN",
                    value: "x".into()
                }),
                word("1."),
                word("炮二平五"),
                word("马８进７"),
                word("2."),
                word("H2+3"),
                word("$1"),
                word("1-0"),
                word("*"),
            ]
        );
    }

    #[test]
    fn ideographic_spaces_separate_words() {
        assert_eq!(
            tokens("1.炮二平五\u{3000}马８进７"),
            vec![word("1.炮二平五"), word("马８进７")]
        );
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            tokens("1. h2e2\n{never closed"),
            vec![
                word("1."),
                word("h2e2"),
                Err(LexError::OpenComment { line: 2 })
            ]
        );
        assert_eq!(
            tokens("\n\n1. h2e2 (h2d2 (b2e2)"),
            vec![
                word("1."),
                word("h2e2"),
                Err(LexError::OpenVariation { line: 3 })
            ]
        );
        let bad = tokens("[Event unquoted]\n1. h2e2");
        assert_eq!(
            bad,
            vec![
                Err(LexError::BadTag {
                    line: 1,
                    text: "[Event unquoted]".into()
                }),
                word("1."),
                word("h2e2"),
            ]
        );
        assert!(matches!(
            tokens("[Event \"no end\n1. h2e2").first(),
            Some(Err(LexError::BadTag { line: 1, .. }))
        ));
    }
}
