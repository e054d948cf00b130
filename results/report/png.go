package report

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"sync"

	"git.sr.ht/~sbinet/gg"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// renderPNG draws the figure as PNG at vgimg's default resolution, as
// draw.NewFormattedCanvas does, but on a raster taken from a pool and drawn on in place
// (vgimg.New allocates one and gg copies it into a second, a few megabytes a figure
// whose pages a report's dozens of figures fault in), and compressed for speed: a plot
// is mostly flat colour, which the fastest level compresses nearly as well, in a
// fraction of the time the default level took (a fifth of a small run's CPU).
func (f *Figure) renderPNG() ([]byte, error) {
	img := rasters.get(f.w, f.h)
	defer rasters.put(img)
	ctx := gg.NewContextForRGBA(img)
	ctx.SetLineCapButt() // what vgimg.New does to a context of its own
	ctx.InvertY()
	c := vgimg.NewWith(vgimg.UseImageWithContext(img, ctx), vgimg.UseDPI(vgimg.DefaultDPI))
	return f.drawOn(fastPNG{c})
}

// fastPNG writes its canvas's image as PNG at the fastest compression.
type fastPNG struct{ *vgimg.Canvas }

func (c fastPNG) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, c.Image()); err != nil {
		return 0, err
	}
	return b.WriteTo(w)
}

// rasters are the images figures are drawn on, kept for the next figure of the same size.
var rasters rasterPool

type rasterPool struct {
	mu   sync.Mutex
	free map[image.Point][]*image.RGBA
}

// get returns an image of the pixel size a canvas of w by h has at the default
// resolution; its pixels are whatever the last figure left (the canvas paints its
// background over all of them).
func (p *rasterPool) get(w, h vg.Length) *image.RGBA {
	size := image.Pt(int(w/vg.Inch*vgimg.DefaultDPI+0.5), int(h/vg.Inch*vgimg.DefaultDPI+0.5))
	p.mu.Lock()
	defer p.mu.Unlock()
	if imgs := p.free[size]; len(imgs) > 0 {
		img := imgs[len(imgs)-1]
		p.free[size] = imgs[:len(imgs)-1]
		return img
	}
	return image.NewRGBA(image.Rectangle{Max: size})
}

func (p *rasterPool) put(img *image.RGBA) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = map[image.Point][]*image.RGBA{}
	}
	p.free[img.Rect.Max] = append(p.free[img.Rect.Max], img)
}
