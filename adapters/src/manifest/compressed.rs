//! Manifest files, plain or gzip-compressed (a name ending in `.gz`), opened as byte streams so a
//! cluster of hundreds of thousands of objects never needs its whole text in memory. A stream
//! stops with an error past the text limits of `limits`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use super::limits::{Limited, MAX_TEXT_BYTES, inflated_limit};

fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Opens `path` for reading, decompressing a `.gz` file; reading fails once the text passes
/// its limit (`MAX_TEXT_BYTES`, and for gzip `inflated_limit` of the file's size).
pub fn open_reader(path: &Path) -> io::Result<Box<dyn BufRead>> {
    let file = File::open(path)?;
    Ok(if is_gzip(path) {
        let limit = inflated_limit(file.metadata()?.len());
        let why = "the limit for this gzip file: 256 times its size, at least 64 MiB, at most 8 GiB; a cluster dump compresses 10 to 70 times";
        let inflated = MultiGzDecoder::new(BufReader::new(file));
        Box::new(Limited::new(BufReader::new(inflated), limit, why))
    } else {
        let why = "the limit, at least twice a 50,000-node cluster's dump";
        Box::new(Limited::new(BufReader::new(file), MAX_TEXT_BYTES, why))
    })
}

/// A file being written, compressed when its name ends in `.gz`; `finish` flushes it and
/// writes the gzip trailer, so a failure there is reported instead of lost in a drop.
pub struct ManifestWriter {
    inner: Inner,
}

enum Inner {
    Plain(BufWriter<File>),
    Gzip(BufWriter<GzEncoder<File>>),
}

impl ManifestWriter {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path) -> io::Result<ManifestWriter> {
        let file = File::create(path)?;
        let inner = if is_gzip(path) {
            Inner::Gzip(BufWriter::new(GzEncoder::new(file, Compression::default())))
        } else {
            Inner::Plain(BufWriter::new(file))
        };
        Ok(ManifestWriter { inner })
    }

    /// Flushes everything and closes the file.
    pub fn finish(self) -> io::Result<()> {
        match self.inner {
            Inner::Plain(w) => w.into_inner().map_err(|e| e.into_error())?.sync_all(),
            Inner::Gzip(w) => w
                .into_inner()
                .map_err(|e| e.into_error())?
                .finish()?
                .sync_all(),
        }
    }
}

impl Write for ManifestWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Plain(w) => w.write(buf),
            Inner::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Plain(w) => w.flush(),
            Inner::Gzip(w) => w.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;
    use std::io::Read;

    fn round_trip(name: &str) -> (String, Vec<u8>) {
        let dir = TestDir::new(&[]);
        let path = dir.join(name);
        let mut w = ManifestWriter::create(&path).unwrap();
        w.write_all(b"{\"kind\": \"Node\"}\n").unwrap();
        w.finish().unwrap();
        let mut text = String::new();
        open_reader(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        (text, std::fs::read(&path).unwrap())
    }

    #[test]
    fn gz_names_are_compressed_and_read_back() {
        let (text, bytes) = round_trip("c.json.gz");
        assert_eq!(text, "{\"kind\": \"Node\"}\n");
        assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip magic");
    }

    #[test]
    fn a_gzip_bomb_is_refused_at_its_inflation_limit() {
        let dir = TestDir::new(&[]);
        let path = dir.join("zeros.yaml.gz");
        // 80 gzip members of 1 MiB of zeros each: 80 MiB from about 80 KiB.
        let mut member = GzEncoder::new(Vec::new(), Compression::best());
        member.write_all(&vec![0u8; 1 << 20]).unwrap();
        std::fs::write(&path, member.finish().unwrap().repeat(80)).unwrap();
        let mut sink = Vec::new();
        let e = open_reader(&path)
            .unwrap()
            .read_to_end(&mut sink)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(
            e.to_string().starts_with(
                "more than 67108864 bytes of text (the limit for this gzip file: 256 times its size"
            ),
            "{e}"
        );
        assert_eq!(sink.len(), 64 << 20);
    }

    #[test]
    fn other_names_are_plain() {
        let (text, bytes) = round_trip("c.json");
        assert_eq!(text.as_bytes(), bytes);
    }
}
