// A tree for scripts/check-layers.py --tree: Widget::weight is defined in src/support/gadget.cpp,
// a file of another name than this header's (widget.cpp holds the rest). The check must fail,
// naming that file.
#pragma once

namespace cudacore {

class Widget {
public:
    int size() const;
    int weight() const;
};

}  // namespace cudacore
