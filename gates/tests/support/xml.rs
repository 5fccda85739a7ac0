//! A strict reader of the XML subset a JUnit report uses (declaration, elements, attributes in
//! double quotes, character data, the five predefined entities): enough to say a report is
//! well formed and to read its elements, refusing anything else by position.

/// One element: its name and attributes (entities decoded), in document order.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
}

impl Element {
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Every element of a well-formed document, in order; why not, when it is not.
pub fn elements(xml: &str) -> Result<Vec<Element>, String> {
    let mut rest = xml.trim_start();
    if let Some(after) = rest.strip_prefix("<?xml") {
        let end = after.find("?>").ok_or("unterminated declaration")?;
        rest = &after[end + 2..];
    }
    let mut open: Vec<String> = Vec::new();
    let mut found = Vec::new();
    let mut roots = 0;
    while !rest.is_empty() {
        let at = xml.len() - rest.len();
        let Some(lt) = rest.find('<') else {
            text(rest, at)?;
            if !rest.trim().is_empty() {
                return Err(format!("text after the root element at {at}"));
            }
            break;
        };
        text(&rest[..lt], at)?;
        if open.is_empty() && !rest[..lt].trim().is_empty() {
            return Err(format!("text outside the root element at {at}"));
        }
        rest = &rest[lt + 1..];
        let gt = rest.find('>').ok_or(format!("unterminated tag at {at}"))?;
        let tag = &rest[..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(expected) if expected == name.trim() => {}
                other => return Err(format!("</{name}> closes {other:?} at {at}")),
            }
            continue;
        }
        let (tag, empty) = match tag.strip_suffix('/') {
            Some(tag) => (tag, true),
            None => (tag, false),
        };
        if open.is_empty() {
            roots += 1;
        }
        let element = parse_tag(tag, at)?;
        if !empty {
            open.push(element.name.clone());
        }
        found.push(element);
    }
    match (open.as_slice(), roots) {
        ([], 1) => Ok(found),
        ([], n) => Err(format!("{n} root elements")),
        (unclosed, _) => Err(format!("unclosed elements {unclosed:?}")),
    }
}

fn parse_tag(tag: &str, at: usize) -> Result<Element, String> {
    let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
    let name = &tag[..name_end];
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(format!("bad element name {name:?} at {at}"));
    }
    let mut attributes = Vec::new();
    let mut rest = tag[name_end..].trim_start();
    while !rest.is_empty() {
        let eq = rest.find("=\"").ok_or(format!("bad attribute at {at}"))?;
        let key = rest[..eq].trim().to_string();
        let value_and_rest = &rest[eq + 2..];
        let close = value_and_rest
            .find('"')
            .ok_or(format!("unterminated attribute at {at}"))?;
        let value = &value_and_rest[..close];
        if value.contains('<') {
            return Err(format!("'<' in attribute {key} at {at}"));
        }
        if attributes.iter().any(|(k, _)| *k == key) {
            return Err(format!("attribute {key} repeated at {at}"));
        }
        attributes.push((key, decode(value, at)?));
        rest = value_and_rest[close + 1..].trim_start();
    }
    Ok(Element {
        name: name.to_string(),
        attributes,
    })
}

/// Checks character data: every '&' starts a predefined entity.
fn text(data: &str, at: usize) -> Result<(), String> {
    decode(data, at).map(|_| ())
}

fn decode(data: &str, at: usize) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = data;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let semi = rest[amp..].find(';').ok_or(format!("bare '&' near {at}"))?;
        out.push(match &rest[amp + 1..amp + semi] {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            other => return Err(format!("unknown entity &{other}; near {at}")),
        });
        rest = &rest[amp + semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
