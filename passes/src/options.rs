//! Pass options in MLIR's form: `{key=value key2=value2}` arrives here as
//! the text between the braces.

use std::collections::BTreeMap;

/// `key=value` pairs separated by spaces; a value may itself contain `=`
/// (`values=ffn_gate_up.input_size=512`).
pub fn parse(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut options = BTreeMap::new();
    for item in text.split_whitespace() {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("option `{item}` is not of the form key=value"))?;
        if options.insert(key.to_string(), value.to_string()).is_some() {
            return Err(format!("option `{key}` is given twice"));
        }
    }
    Ok(options)
}
