#include "FitsImage.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

namespace rtcp::test {

FitsImage FitsImage::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::map<std::string, std::string> cards;
  size_t headerBytes = 0;
  for (bool end = false; !end;) {
    char block[2880];
    if (!in.read(block, sizeof block)) throw std::runtime_error(path + ": header ends early");
    headerBytes += sizeof block;
    for (int card = 0; card < 36 && !end; ++card) {
      const std::string line(block + card * 80, 80);
      const std::string key = line.substr(0, line.find_first_of(" =", 0));
      if (key == "END") end = true;
      if (line.size() > 10 && line[8] == '=') cards[key] = line.substr(10, 70);
    }
  }
  auto number = [&](const std::string& key) {
    const auto found = cards.find(key);
    if (found == cards.end()) throw std::runtime_error(path + ": no " + key);
    return std::stod(found->second);
  };
  if (number("BITPIX") != -32) throw std::runtime_error(path + ": BITPIX is not -32");
  FitsImage image;
  image.width = int(number("NAXIS1"));
  image.height = int(number("NAXIS2"));
  image.crpix1 = number("CRPIX1");
  image.crpix2 = number("CRPIX2");
  image.cdelt1 = number("CDELT1");
  image.cdelt2 = number("CDELT2");
  image.crval1 = number("CRVAL1");
  image.crval2 = number("CRVAL2");
  image.pixels.resize(size_t(image.width) * image.height);
  in.seekg(std::streamoff(headerBytes));
  for (float& pixel : image.pixels) {
    unsigned char bytes[4];
    if (!in.read(reinterpret_cast<char*>(bytes), 4))
      throw std::runtime_error(path + ": data ends early");
    const uint32_t bits =
        uint32_t(bytes[0]) << 24 | uint32_t(bytes[1]) << 16 | uint32_t(bytes[2]) << 8 | bytes[3];
    std::memcpy(&pixel, &bits, 4);  // big-endian IEEE float
  }
  return image;
}

void FitsImage::worldOf(double x, double y, double& ra, double& dec) const {
  const double degree = M_PI / 180;
  const double l = (x + 1 - crpix1) * cdelt1 * degree;  // FITS pixels count from 1
  const double m = (y + 1 - crpix2) * cdelt2 * degree;
  const double ra0 = crval1 * degree, dec0 = crval2 * degree;
  const double n = std::sqrt(1 - l * l - m * m);
  dec = std::asin(m * std::cos(dec0) + n * std::sin(dec0));
  ra = ra0 + std::atan2(l, n * std::cos(dec0) - m * std::sin(dec0));
}

FitsImage::Peak FitsImage::peak() const {
  size_t best = 0;
  for (size_t i = 0; i < pixels.size(); ++i)
    if (pixels[i] > pixels[best]) best = i;
  Peak result;
  result.value = pixels.at(best);
  worldOf(double(best % size_t(width)), double(best / size_t(width)), result.ra, result.dec);
  return result;
}

double angularDistance(double ra1, double dec1, double ra2, double dec2) {
  return std::acos(std::min(1.0, std::sin(dec1) * std::sin(dec2) +
                                     std::cos(dec1) * std::cos(dec2) * std::cos(ra1 - ra2)));
}

}  // namespace rtcp::test
